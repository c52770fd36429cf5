import { ECOSYSTEM_NAMES, isKnownEcosystem, isValidVersion } from "../../advisories/ecosystems.js";
import { ecosystemBase, ecosystemSpelledAs, isOsvEcosystem } from "../../advisories/osv/ecosystems.js";
import { OSV_LIMITS } from "../../advisories/osv/record.js";
import { MAX_PAGE_SIZE } from "../../api/pagination.js";
import type { Violations } from "../../api/validation.js";

/** A repeated filter of ids or names: at most MAX_PAGE_SIZE values, each non-empty text of at most `max` characters. */
export function checkNames(violations: Violations, field: string, values: readonly string[], max: number): void {
  if (values.length > MAX_PAGE_SIZE) violations.add(field, `must hold at most ${MAX_PAGE_SIZE} values`);
  values.forEach((value, i) => violations.text(`${field}[${i}]`, value, { required: true, max }));
}

/** Record ids or aliases (`advisory_ids`, `ids`, `cves`). */
export function checkRecordNames(violations: Violations, field: string, values: readonly string[]): void {
  checkNames(violations, field, values, OSV_LIMITS.id);
}

/** Package names (`artifact_names`). */
export function checkArtifactNames(violations: Violations, field: string, values: readonly string[]): void {
  checkNames(violations, field, values, OSV_LIMITS.packageName);
}

/** An ecosystem filter: one the OSV schema defines, spelled as it spells it. */
export function checkEcosystem(violations: Violations, field: string, ecosystem: string): void {
  if (ecosystem === "" || isOsvEcosystem(ecosystem)) return;
  const spelled = ecosystemSpelledAs(ecosystemBase(ecosystem));
  violations.add(field, `${JSON.stringify(ecosystem)} is not an OSV ecosystem${spelled ? `; did you mean ${JSON.stringify(spelled)}?` : ""}`);
}

/**
 * The `version` filter: it needs `ecosystem`, one the version matcher orders, and
 * `artifact_names`; the version must be valid in that ecosystem.
 */
export function checkVersionFilter(violations: Violations, request: { version: string; ecosystem: string; artifactNames: string[] }): void {
  const { version, ecosystem } = request;
  if (version === "") return;
  if (version.length > OSV_LIMITS.version) return void violations.add("version", `must be at most ${OSV_LIMITS.version} characters`);
  if (request.artifactNames.length === 0) violations.add("artifact_names", "is required with version");
  if (ecosystem === "") return void violations.add("ecosystem", "is required with version");
  if (!isOsvEcosystem(ecosystem)) return;
  if (!isKnownEcosystem(ecosystem)) {
    violations.add("ecosystem", `versions of ${JSON.stringify(ecosystem)} cannot be matched; version matching knows ${ECOSYSTEM_NAMES.join(", ")}`);
  } else if (!isValidVersion(ecosystem, version)) {
    violations.add("version", `${JSON.stringify(version)} is not a valid ${ecosystem} version`);
  }
}
