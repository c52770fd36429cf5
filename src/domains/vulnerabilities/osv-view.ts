import type { OsvAffected, OsvSeverity } from "../../engines/advisories/osv/record.js";
import { scoreSeverity, type SeverityScore } from "../../engines/advisories/severity.js";

/**
 * OSV parts as both API packages show them (`platform.vulnerabilities.v2` and
 * `platform.advisory.v2` declare the same Severity and event fields): plain initializers for
 * their messages.
 */

/** Severity.Type values, the same in both packages. */
const SEVERITY_TYPES: Record<string, number> = { CVSS_V2: 1, CVSS_V3: 2, CVSS_V4: 3 };

export interface SeverityView {
  type: number;
  score: string;
  baseScore?: number;
  osvType: string;
}

/** Distinct (type, vector) pairs whose scores are kept; past it the oldest is dropped. */
const SCORES_KEPT = 10_000;
const scores = new Map<string, SeverityScore>();

/**
 * `scoreSeverity`, computed once per (type, vector) while it stays among the last SCORES_KEPT
 * scored: scoring takes the calculator 0.05 to 0.5 ms for a CVSS 2 or 3 vector and 1 to 2 ms for
 * a CVSS 4.0 one, and a feed's advisories share few distinct vectors. The object returned is
 * shared: callers must not change it.
 */
export function cachedScore(severity: OsvSeverity): Readonly<SeverityScore> {
  const key = `${String(severity?.type ?? "")}\0${String(severity?.score ?? "")}`;
  let scored = scores.get(key);
  if (scored === undefined) {
    scored = scoreSeverity(severity);
    if (scores.size >= SCORES_KEPT) scores.delete(scores.keys().next().value as string);
    scores.set(key, scored);
  }
  return scored;
}

/** Each severity with its type as the enum (0 for non-CVSS types) and its base score when the vector is valid CVSS. */
export function severityViews(severities: readonly OsvSeverity[]): SeverityView[] {
  return severities.map((s) => {
    const scored = cachedScore(s);
    return { type: SEVERITY_TYPES[scored.type] ?? 0, score: scored.vector, baseScore: scored.baseScore, osvType: scored.type };
  });
}

export type EventCase = "introduced" | "fixed" | "lastAffected" | "limit";

export interface EventView {
  rangeIndex: number;
  rangeType: string;
  repo: string;
  event: { case: EventCase; value: string };
}

const EVENT_CASES: Array<[string, EventCase]> = [
  ["introduced", "introduced"],
  ["fixed", "fixed"],
  ["last_affected", "lastAffected"],
  ["limit", "limit"],
];

/** The ranges' events of `entries` (one package's `affected[]` entries), range by range, numbering the ranges across the entries. */
export function eventViews(entries: readonly OsvAffected[]): EventView[] {
  const out: EventView[] = [];
  let rangeIndex = 0;
  for (const entry of entries) {
    for (const range of entry.ranges ?? []) {
      for (const event of range.events) {
        const found = EVENT_CASES.find(([key]) => key in event);
        if (!found) continue;
        const value = (event as Record<string, string>)[found[0]];
        out.push({ rangeIndex, rangeType: range.type, repo: range.repo ?? "", event: { case: found[1], value } });
      }
      rangeIndex++;
    }
  }
  return out;
}

/** The versions `entries` list explicitly, each once. */
export function listedVersions(entries: readonly OsvAffected[]): string[] {
  return [...new Set(entries.flatMap((e) => e.versions ?? []))];
}
