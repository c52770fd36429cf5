import type { Violations } from "../../aip/validation.js";
import { TAG_NAME } from "./names.js";
import { DIGEST, MAX_DIGEST_LENGTH } from "./digests.js";

export { DIGEST, MAX_DIGEST_LENGTH, TAG_NAME };

export function checkTagFields(violations: Violations, tag: { name: string; digest: string }, prefix = "tag."): void {
  violations.text(`${prefix}name`, tag.name, { required: true, max: 128, pattern: TAG_NAME });
  violations.text(`${prefix}digest`, tag.digest, { required: true, max: MAX_DIGEST_LENGTH, pattern: DIGEST });
}
