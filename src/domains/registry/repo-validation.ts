import type { Violations } from "../../aip/validation.js";
import { checkImmutableTags } from "./immutable-tags.js";
import { REPO_NAME } from "./names.js";

export { REPO_NAME };
/** Readme limit in UTF-8 bytes. */
export const MAX_README_BYTES = 256 * 1024;

export function checkRepoFields(violations: Violations, repo: { name: string; description: string; immutableTags?: string[] }, prefix = "repo."): void {
  violations.text(`${prefix}name`, repo.name, { required: true, max: 255, pattern: REPO_NAME });
  violations.description(`${prefix}description`, repo.description);
  if (repo.immutableTags !== undefined) checkImmutableTags(violations, repo.immutableTags, `${prefix}immutable_tags`);
}

export function checkReadme(violations: Violations, content: string, field = "repo_readme.content"): void {
  if (Buffer.byteLength(content, "utf8") > MAX_README_BYTES) violations.add(field, `must be at most ${MAX_README_BYTES} bytes (256 KiB) of UTF-8`);
}
