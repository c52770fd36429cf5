// The index of OSV ecosystems this library can order versions for
// (https://ossf.github.io/osv-schema/#defined-ecosystems). An ecosystem string is a name, for some
// ecosystems followed by `:` and a release or repository (`Alpine:v3.18`, `Debian:12`,
// `Ubuntu:22.04:LTS`, `Maven:https://maven.google.com`); the suffix never changes the ordering.
import { splitEcosystem } from "./osv/ecosystems.js";
import { InvalidVersionError, UnknownEcosystemError } from "./errors.js";
import { apkOrdering } from "./versions/apk.js";
import { debianOrdering } from "./versions/debian.js";
import { mavenOrdering } from "./versions/maven.js";
import type { VersionOrdering } from "./versions/ordering.js";
import { pypiOrdering } from "./versions/pypi.js";
import { goOrdering, semverOrdering } from "./versions/semver.js";

export interface Ecosystem {
  /** The OSV name without a suffix: `crates.io`, `npm`, `Go`, `PyPI`, `Maven`, `Alpine`, ... */
  readonly name: string;
  /** Orders the bounds of `ECOSYSTEM` ranges and the explicit `versions` list. */
  readonly ordering: VersionOrdering<unknown>;
  /** Orders the bounds of `SEMVER` ranges: SemVer 2, or the ecosystem's own SemVer dialect. */
  readonly semverOrdering: VersionOrdering<unknown>;
  /** Whether the name may carry a `:suffix`. */
  readonly suffix: boolean;
  /** The form under which two package names are the same package. */
  packageKey(name: string): string;
}

const exact = (name: string): string => name;

/** PEP 503: case-insensitive, runs of `-`, `_` and `.` are one `-`. */
const pep503 = (name: string): string => name.toLowerCase().replace(/[-_.]+/g, "-");

const ECOSYSTEMS: ReadonlyMap<string, Ecosystem> = new Map(
  [
    { name: "crates.io", ordering: semverOrdering, semverOrdering, suffix: false, packageKey: exact },
    { name: "npm", ordering: semverOrdering, semverOrdering, suffix: false, packageKey: exact },
    { name: "Go", ordering: goOrdering, semverOrdering: goOrdering, suffix: false, packageKey: exact },
    { name: "PyPI", ordering: pypiOrdering, semverOrdering, suffix: false, packageKey: pep503 },
    { name: "Maven", ordering: mavenOrdering, semverOrdering, suffix: true, packageKey: exact },
    { name: "Alpine", ordering: apkOrdering, semverOrdering, suffix: true, packageKey: exact },
    { name: "Wolfi", ordering: apkOrdering, semverOrdering, suffix: false, packageKey: exact },
    { name: "Chainguard", ordering: apkOrdering, semverOrdering, suffix: false, packageKey: exact },
    { name: "Debian", ordering: debianOrdering, semverOrdering, suffix: true, packageKey: exact },
    { name: "Ubuntu", ordering: debianOrdering, semverOrdering, suffix: true, packageKey: exact },
  ].map((e) => [e.name, e as Ecosystem]),
);

/** The OSV names (without suffix) of every supported ecosystem. */
export const ECOSYSTEM_NAMES: readonly string[] = [...ECOSYSTEMS.keys()];

export interface EcosystemName {
  readonly ecosystem: Ecosystem;
  /** What followed the first `:`, if anything. */
  readonly suffix?: string;
}

/**
 * Resolves an OSV ecosystem string (case-sensitive, as OSV spells it).
 * @throws UnknownEcosystemError for a name we have no ordering for, or a suffix on an ecosystem
 *   that takes none, or an empty suffix.
 */
export function resolveEcosystem(osvEcosystem: string): EcosystemName {
  const { base, suffix } = splitEcosystem(osvEcosystem);
  const ecosystem = ECOSYSTEMS.get(base);
  if (ecosystem === undefined || (suffix !== undefined && (!ecosystem.suffix || suffix === ""))) {
    throw new UnknownEcosystemError(osvEcosystem);
  }
  return suffix === undefined ? { ecosystem } : { ecosystem, suffix };
}

export function isKnownEcosystem(osvEcosystem: string): boolean {
  try {
    resolveEcosystem(osvEcosystem);
    return true;
  } catch {
    return false;
  }
}

/**
 * Parses a version of an ecosystem under its `ECOSYSTEM` ordering.
 * @throws UnknownEcosystemError, InvalidVersionError
 */
export function parseVersion(osvEcosystem: string, version: string): unknown {
  const { ecosystem } = resolveEcosystem(osvEcosystem);
  const parsed = ecosystem.ordering.parse(version);
  if (parsed === undefined) throw new InvalidVersionError(osvEcosystem, version);
  return parsed;
}

export function isValidVersion(osvEcosystem: string, version: string): boolean {
  return resolveEcosystem(osvEcosystem).ecosystem.ordering.parse(version) !== undefined;
}

/**
 * Compares two versions of one ecosystem: negative, zero (the same version) or positive.
 * @throws UnknownEcosystemError, InvalidVersionError (naming the first invalid version)
 */
export function compareVersions(osvEcosystem: string, a: string, b: string): number {
  const { ecosystem } = resolveEcosystem(osvEcosystem);
  const pa = ecosystem.ordering.parse(a);
  if (pa === undefined) throw new InvalidVersionError(osvEcosystem, a);
  const pb = ecosystem.ordering.parse(b);
  if (pb === undefined) throw new InvalidVersionError(osvEcosystem, b);
  return Math.sign(ecosystem.ordering.compare(pa, pb));
}

/**
 * Whether an OSV package identity names the package of a query: the same ecosystem name, the same
 * suffix when both carry one (`Alpine:v3.18` is not `Alpine:v3.19`; plain `Alpine` matches
 * either), and names equal under the ecosystem's rule (PEP 503 for PyPI, exact elsewhere).
 * @throws UnknownEcosystemError for the query's ecosystem only; an entry of an unknown ecosystem
 *   is simply another package.
 */
export function samePackage(
  query: { ecosystem: string; name: string },
  entry: { ecosystem: string; name: string },
): boolean {
  const q = resolveEcosystem(query.ecosystem);
  if (!isKnownEcosystem(entry.ecosystem)) return false;
  const e = resolveEcosystem(entry.ecosystem);
  if (q.ecosystem !== e.ecosystem) return false;
  if (q.suffix !== undefined && e.suffix !== undefined && q.suffix !== e.suffix) return false;
  return q.ecosystem.packageKey(query.name) === q.ecosystem.packageKey(entry.name);
}
