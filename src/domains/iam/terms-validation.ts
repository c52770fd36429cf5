import type { Violations } from "../../aip/validation.js";

/** A terms document id. */
export const DOC_ID = /^[A-Za-z0-9][A-Za-z0-9._:/-]{0,127}$/;
const MAX_DOCS = 50;

/** The documents of one acceptance: 1 to 50 document ids, none twice. */
export function checkDocumentIds(violations: Violations, docs: readonly string[], field = "document_ids"): void {
  if (docs.length === 0) violations.add(field, "is required");
  if (docs.length > MAX_DOCS) violations.add(field, `must hold at most ${MAX_DOCS} ids`);
  docs.forEach((doc, i) => {
    violations.text(`${field}[${i}]`, doc, { required: true, max: 128, pattern: DOC_ID });
    if (docs.indexOf(doc) !== i) violations.add(`${field}[${i}]`, "repeats an earlier id");
  });
}
