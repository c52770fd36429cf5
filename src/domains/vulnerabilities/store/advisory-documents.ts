import type { Page } from "../../../aip/pagination.js";
import { applyPage, countRows } from "../../kit/list-query.js";
import type { Db } from "../../kit/schema.js";
import { filteredAdvisories, type AdvisoryFilter, type AdvisoryRow } from "./advisories.js";

/** Sortable document fields: the document id is the artifact name. */
export const documentOrderable = { id: "uid" };

/** One artifact and its advisories matching the filter. */
export interface DocumentRow {
  /** The artifact name. */
  uid: string;
  advisories: AdvisoryRow[];
}

/**
 * One page of documents: the artifact names with an advisory matching `filter` (withdrawn
 * records' included), up to `limit + 1` in `page.order`, each with those advisories by
 * ecosystem then advisory id; and the count of all such artifacts.
 */
export async function listDocuments(db: Db, filter: AdvisoryFilter, page: Page): Promise<{ rows: DocumentRow[]; total: number }> {
  const matching = { ...filter, includeWithdrawn: true };
  const artifacts = () => db.selectFrom(filteredAdvisories(db, matching).select("advisories.artifact_name as uid").distinct().as("documents"));
  const names = (await applyPage(artifacts().select("documents.uid"), page, "documents").execute()).map((r) => r.uid);
  const total = await countRows(artifacts(), page.total);
  if (names.length === 0) return { rows: [], total };
  const advisories = await filteredAdvisories(db, { ...matching, artifactNames: [names] })
    .selectAll()
    .orderBy("advisories.ecosystem")
    .orderBy("advisories.advisory_id")
    .execute();
  const byName = new Map<string, AdvisoryRow[]>(names.map((name) => [name, []]));
  for (const row of advisories) byName.get(row.artifact_name)?.push(row);
  return { rows: names.map((uid) => ({ uid, advisories: byName.get(uid) ?? [] })), total };
}
