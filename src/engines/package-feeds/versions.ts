import { compareVersions, isValidVersion } from "../advisories/ecosystems.js";
import type { LibraryEcosystem } from "./library-package.js";

/** PEP 440 pre- and development releases (`1.0a1`, `2.0rc1`, `1.0.dev3`); post releases are not. */
const PEP440_PRE = /(?:a|b|c|rc|alpha|beta|pre|preview|dev)[-_.]?\d*(?:$|[^a-z])/i;
/** Maven qualifiers that sort before the release (ComparableVersion): alpha, beta, milestone, rc/cr, snapshot. */
const MAVEN_PRE = /(?:^|[-.\d])(?:alpha|beta|milestone|rc|cr|snapshot|a|b|m)(?:[-.]?\d+)?(?:$|[-.])/i;

/** Whether `version` is a prerelease in its ecosystem: SemVer's `-tag`, PEP 440's a/b/rc/dev, Maven's qualifiers. */
export function isPrerelease(ecosystem: LibraryEcosystem, version: string): boolean {
  switch (ecosystem) {
    case "npm":
      return /^[^+]*-/.test(version);
    case "PyPI":
      return PEP440_PRE.test(version.replace(/^\d+!/, ""));
    case "Maven":
      return MAVEN_PRE.test(version);
  }
}

/**
 * The ecosystem's ordering (the advisory matcher's: SemVer 2, PEP 440, Maven), lowest first.
 * Versions the ordering cannot read sort below every readable one, by their text.
 */
export function compareLibraryVersions(ecosystem: LibraryEcosystem, a: string, b: string): number {
  const va = isValidVersion(ecosystem, a);
  const vb = isValidVersion(ecosystem, b);
  if (va && vb) return compareVersions(ecosystem, a, b) || (a < b ? -1 : a > b ? 1 : 0);
  if (va !== vb) return va ? 1 : -1;
  return a < b ? -1 : a > b ? 1 : 0;
}

/** The highest version that is not a prerelease; the highest of all when every one is; "" for none. */
export function latestVersion(ecosystem: LibraryEcosystem, versions: readonly string[]): string {
  const sorted = [...versions].sort((a, b) => compareLibraryVersions(ecosystem, a, b));
  const releases = sorted.filter((v) => !isPrerelease(ecosystem, v));
  return (releases.length > 0 ? releases : sorted).at(-1) ?? "";
}
