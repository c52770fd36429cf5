// The advisory version matcher: OSV `affected[]` evaluation, per-ecosystem version orderings and
// CVSS severity scores. Pure functions: no I/O, no store.
export { evaluateAffected, fixedVersion, isVulnerable, matchAffected } from "./affected.js";
export type { AffectedVerdict, PackageVersion, UnevaluableRange } from "./affected.js";
export {
  ECOSYSTEM_NAMES,
  compareVersions,
  isKnownEcosystem,
  isValidVersion,
  parseVersion,
  resolveEcosystem,
  samePackage,
} from "./ecosystems.js";
export type { Ecosystem, EcosystemName } from "./ecosystems.js";
export { InvalidVersionError, UnknownEcosystemError } from "./errors.js";
export type { OsvAffected, OsvEvent, OsvPackage, OsvRange, OsvRecord, OsvSeverity } from "./osv/record.js";
export { cvssBaseScore, cvssRating, reportSeverity, scoreSeverities, scoreSeverity } from "./severity.js";
export type { CvssRating, ReportSeverity, SeverityScore } from "./severity.js";
