import { ECOSYSTEM_NAMES, isKnownEcosystem, isValidVersion } from "../../engines/advisories/ecosystems.js";
import { ecosystemBase, ecosystemSpelledAs, isOsvEcosystem } from "../../engines/advisories/osv/ecosystems.js";
import { OSV_LIMITS } from "../../engines/advisories/osv/record.js";
import { MAX_PAGE_SIZE } from "../../aip/pagination.js";
import type { Violations } from "../../aip/validation.js";

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

/** Longest `query`. */
export const MAX_ADVISORY_QUERY = 200;

/** OSV ecosystems (`artifact_types`): each as `checkEcosystem`. */
export function checkEcosystems(violations: Violations, field: string, values: readonly string[]): void {
  if (values.length > MAX_PAGE_SIZE) violations.add(field, `must hold at most ${MAX_PAGE_SIZE} values`);
  values.forEach((value, i) => (value === "" ? violations.add(`${field}[${i}]`, "must not be empty") : checkEcosystem(violations, `${field}[${i}]`, value)));
}

/**
 * The hosted filters that select what imported OSV records do not have: any of them set is a
 * violation naming it (never the unfiltered list).
 */
export function checkUnheldFilters(
  violations: Violations,
  request: {
    legacyAdvisoryIds: string[];
    artifactArchitectures: string[];
    componentNames: string[];
    componentTypes: string[];
    componentLocations: string[];
    origin?: string;
    eventReviewStates: unknown[];
    eventAuthors: string[];
    excludeEventAuthors: string[];
    eventReviewers: string[];
    eventTypes: unknown[];
    latestEventType?: unknown;
  },
): void {
  const unheld: Array<[string, boolean, string]> = [
    ["legacy_advisory_ids", request.legacyAdvisoryIds.length > 0, "no legacy advisory ids are kept"],
    ["artifact_architectures", request.artifactArchitectures.length > 0, "OSV records name no architectures"],
    ["component_names", request.componentNames.length > 0, "OSV records name no components; filter on artifact_names"],
    ["component_types", request.componentTypes.length > 0, "OSV records name no components"],
    ["component_locations", request.componentLocations.length > 0, "OSV records name no components"],
    ["origin", request.origin !== undefined, "no origin is kept"],
    ["event_review_states", request.eventReviewStates.length > 0, "no triage events are kept"],
    ["event_authors", request.eventAuthors.length > 0, "no triage events are kept"],
    ["exclude_event_authors", request.excludeEventAuthors.length > 0, "no triage events are kept"],
    ["event_reviewers", request.eventReviewers.length > 0, "no triage events are kept"],
    ["event_types", request.eventTypes.length > 0, "no triage events are kept"],
    ["latest_event_type", request.latestEventType !== undefined, "no triage events are kept"],
  ];
  for (const [field, set, why] of unheld) {
    if (set) violations.add(field, `is not supported here: advisories are imported OSV records, and ${why}`);
  }
}
