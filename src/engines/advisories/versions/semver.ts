// SemVer 2.0.0 precedence (https://semver.org, section 11): npm, crates.io, Go and every OSV
// range of type SEMVER. Build metadata is accepted and ignored by the ordering.
import semver from "semver";
import type { VersionOrdering } from "./ordering.js";

const STRICT_START = /^[0-9]/;

function parseStrict(version: string): semver.SemVer | undefined {
  // node-semver also accepts a leading "v" or "=" and surrounding blanks; SemVer 2 does not.
  if (!STRICT_START.test(version) || /\s/.test(version)) return undefined;
  return semver.parse(version) ?? undefined;
}

/** Plain SemVer 2: `1.2.3`, `1.0.0-rc.1`, `1.0.0+build`; no `v` prefix. */
export const semverOrdering: VersionOrdering<semver.SemVer> = {
  name: "SemVer",
  parse: parseStrict,
  compare: (a, b) => a.compare(b),
};

/**
 * Go module versions: SemVer 2 with an optional `v` prefix (`v1.2.3`, the pseudo-version
 * `v0.0.0-20191109021931-daa7c04131f5`, `v2.0.0+incompatible`). OSV's Go records write their
 * bounds without the `v`, go.mod writes it; both spellings of one version compare equal.
 */
export const goOrdering: VersionOrdering<semver.SemVer> = {
  name: "Go",
  parse: (version) => parseStrict(version.startsWith("v") ? version.slice(1) : version),
  compare: (a, b) => a.compare(b),
};
