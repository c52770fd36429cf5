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

/** The hosted filters on data imported OSV records do not have, by proto name, with what is missing. */
const UNHELD_FILTERS = {
  legacy_advisory_ids: ["legacyAdvisoryIds", "no legacy advisory ids are kept"],
  artifact_architectures: ["artifactArchitectures", "OSV records name no architectures"],
  component_names: ["componentNames", "OSV records name no components; filter on artifact_names"],
  component_types: ["componentTypes", "OSV records name no components"],
  component_locations: ["componentLocations", "OSV records name no components"],
  origin: ["origin", "no origin is kept"],
  event_review_states: ["eventReviewStates", "no triage events are kept"],
  event_authors: ["eventAuthors", "no triage events are kept"],
  exclude_event_authors: ["excludeEventAuthors", "no triage events are kept"],
  event_reviewers: ["eventReviewers", "no triage events are kept"],
  event_types: ["eventTypes", "no triage events are kept"],
  latest_event_type: ["latestEventType", "no triage events are kept"],
} as const;

/**
 * The hosted filters that select what imported OSV records do not have: any of them set (a
 * non-empty list, a present optional) is a violation naming it, never the unfiltered list.
 */
export function checkUnheldFilters(violations: Violations, request: { [K in (typeof UNHELD_FILTERS)[keyof typeof UNHELD_FILTERS][0]]?: unknown }): void {
  for (const [field, [key, why]] of Object.entries(UNHELD_FILTERS)) {
    const value = request[key];
    if (Array.isArray(value) ? value.length > 0 : value !== undefined) violations.add(field, `is not supported here: advisories are imported OSV records, and ${why}`);
  }
}
