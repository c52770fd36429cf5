// OSV `severity[]` entries scored: the CVSS base score computed from the vector with
// ae-cvss-calculator (CVSS 2.0, 3.0, 3.1 and 4.0 as FIRST specifies them).
import cvss from "ae-cvss-calculator";
import type { OsvSeverity } from "./osv/record.js";

export interface SeverityScore {
  /** The OSV type as given: `CVSS_V2`, `CVSS_V3`, `CVSS_V4`, `Ubuntu`, ... */
  type: string;
  /** The OSV `score` string as given (a CVSS vector, or an Ubuntu priority). */
  vector: string;
  /**
   * The base score, 0.0 to 10.0: for CVSS 2 and 3 the base equation; for CVSS 4 the CVSS-B score
   * (base metrics only, even when the vector also carries threat or environmental metrics).
   * Absent for a type that has no numeric score and for a vector that does not parse.
   */
  baseScore?: number;
}

interface Calculator {
  isBaseFullyDefined(): boolean;
  calculateScores(): { base?: number; baseMetricsOnly?: number };
}

const METRIC = "[A-Za-z]+:[A-Za-z]+";
const V2 = new RegExp(`^${METRIC}(?:/${METRIC})*$`);
const V3 = new RegExp(`^CVSS:3\\.([01])/${METRIC}(?:/${METRIC})*$`);
const V4 = new RegExp(`^CVSS:4\\.0/${METRIC}(?:/${METRIC})*$`);

/** Each metric at most once (the calculator would let the last one win). */
function metricsUnique(vector: string): boolean {
  const names = vector
    .split("/")
    .filter((part) => !part.startsWith("CVSS:"))
    .map((part) => part.slice(0, part.indexOf(":")));
  return new Set(names).size === names.length;
}

function calculatorFor(type: string, vector: string): Calculator | undefined {
  if (!metricsUnique(vector)) return undefined;
  if (type === "CVSS_V2" && V2.test(vector)) return new cvss.Cvss2(vector);
  const v3 = type === "CVSS_V3" ? V3.exec(vector) : null;
  if (v3 !== null) return v3[1] === "0" ? new cvss.Cvss3P0(vector) : new cvss.Cvss3P1(vector);
  if (type === "CVSS_V4" && V4.test(vector)) return new cvss.Cvss4P0(vector);
  return undefined;
}

/**
 * The base score of a CVSS vector of the given OSV type, or undefined when the type is not CVSS,
 * the vector is not of that type's version (a `CVSS:3.1/` vector typed `CVSS_V4`), a metric is
 * unknown, repeated or has an unknown value, or a base metric is missing. Never throws.
 */
export function cvssBaseScore(type: string, vector: string): number | undefined {
  try {
    const calculator = calculatorFor(type, vector);
    if (calculator === undefined || !calculator.isBaseFullyDefined()) return undefined;
    const scores = calculator.calculateScores();
    const base = type === "CVSS_V4" ? scores.baseMetricsOnly : scores.base;
    return typeof base === "number" && Number.isFinite(base) ? base : undefined;
  } catch {
    return undefined;
  }
}

/** Scores one OSV severity entry; see `cvssBaseScore` for when there is no score. Never throws. */
export function scoreSeverity(severity: OsvSeverity): SeverityScore {
  const type = String(severity?.type ?? "");
  const vector = String(severity?.score ?? "");
  const baseScore = cvssBaseScore(type, vector);
  return baseScore === undefined ? { type, vector } : { type, vector, baseScore };
}

/** Scores every entry of an OSV `severity` array, in order (absent: none). */
export function scoreSeverities(severities: readonly OsvSeverity[] | undefined): SeverityScore[] {
  return Array.isArray(severities) ? severities.map(scoreSeverity) : [];
}

export type CvssRating = "NONE" | "LOW" | "MEDIUM" | "HIGH" | "CRITICAL";

/**
 * The qualitative rating of a CVSS 3.x / 4.0 score (CVSS v3.1 specification, table 14; the same
 * bands in CVSS v4.0): 0.0 none, 0.1-3.9 low, 4.0-6.9 medium, 7.0-8.9 high, 9.0-10.0 critical.
 */
export function cvssRating(score: number): CvssRating {
  if (score <= 0) return "NONE";
  if (score < 4) return "LOW";
  if (score < 7) return "MEDIUM";
  if (score < 9) return "HIGH";
  return "CRITICAL";
}

/** The severity a vulnerability report counts a finding under. */
export type ReportSeverity = "CRITICAL" | "HIGH" | "MEDIUM" | "LOW" | "UNKNOWN";

const WORDS: Record<string, ReportSeverity> = {
  critical: "CRITICAL",
  high: "HIGH",
  important: "HIGH",
  moderate: "MEDIUM",
  medium: "MEDIUM",
  low: "LOW",
  negligible: "LOW",
  unimportant: "LOW",
};

/**
 * A finding's severity: the rating of the highest CVSS base score among `severities` (a score of
 * 0.0 counts as LOW: reports have no NONE), else a severity word the database gives (an `Ubuntu`
 * severity entry's score, or `database_specific.severity` as GitHub's advisories write it:
 * LOW, MODERATE, HIGH, CRITICAL), else UNKNOWN. `score` is the highest CVSS base score, if any.
 */
export function reportSeverity(severities: readonly OsvSeverity[] | undefined, databaseSpecific?: unknown): { severity: ReportSeverity; score?: number } {
  const scored = scoreSeverities(severities).filter((s) => s.baseScore !== undefined);
  if (scored.length > 0) {
    const score = Math.max(...scored.map((s) => s.baseScore!));
    const rating = cvssRating(score);
    return { severity: rating === "NONE" ? "LOW" : rating, score };
  }
  for (const s of Array.isArray(severities) ? severities : []) {
    const word = WORDS[String(s?.score ?? "").toLowerCase()];
    if (word !== undefined) return { severity: word };
  }
  const declared = (databaseSpecific as { severity?: unknown } | undefined)?.severity;
  const word = typeof declared === "string" ? WORDS[declared.toLowerCase()] : undefined;
  return { severity: word ?? "UNKNOWN" };
}
