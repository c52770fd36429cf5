// "Is version V of package P affected by this OSV `affected[]` entry?", by the OSV schema's
// evaluation algorithm (https://ossf.github.io/osv-schema/#evaluation):
//
//   affected = V is in `versions` || some range includes V
//   a range includes V when V is below one of its `limit`s (no limit: no bound) and, walking its
//   events sorted by version with affected = false:
//     introduced <= V -> true;  else fixed <= V -> false;  else last_affected < V -> false
//
// `introduced: "0"` sorts before every version and `limit: "*"` after every version. Ties in the
// sort keep the record's order (the sort is stable), so `fixed: X` followed by `introduced: X`
// reopens the range at X. GIT ranges need the repository's commit graph: they are skipped.
import { resolveEcosystem, samePackage, type Ecosystem } from "./ecosystems.js";
import { InvalidVersionError } from "./errors.js";
import type { OsvAffected, OsvEvent, OsvRange, OsvRecord } from "./osv/record.js";
import type { VersionOrdering } from "./versions/ordering.js";

/** A package at a version: what the caller asks about. */
export interface PackageVersion {
  /** An OSV ecosystem string: `crates.io`, `npm`, `Go`, `PyPI`, `Maven`, `Alpine:v3.18`, ... */
  ecosystem: string;
  name: string;
  version: string;
}

/** A range that could not be evaluated; it matches nothing. */
export interface UnevaluableRange {
  /** Index in `affected[].ranges`. */
  range: number;
  reason: string;
}

export interface AffectedVerdict {
  affected: boolean;
  /** Why the version is affected: listed in `versions`, or inside a range. */
  matchedBy?: "versions" | "ranges";
  /** Ranges skipped because a bound does not parse, an event is malformed, or the type is unknown. */
  unevaluable: UnevaluableRange[];
}

const EVENT_KINDS = ["introduced", "fixed", "last_affected", "limit"] as const;
type EventKind = (typeof EVENT_KINDS)[number];

/** A sort key: before everything, a parsed version, or after everything. */
type Bound = { at: "min" } | { at: "max" } | { at: "version"; version: unknown };

interface ParsedEvent {
  kind: EventKind;
  bound: Bound;
  /** The event's version as the record writes it. */
  value: string;
}

function compareBound(ordering: VersionOrdering<unknown>, a: Bound, b: Bound): number {
  if (a.at !== "version" || b.at !== "version") {
    const rank = (x: Bound): number => (x.at === "min" ? -1 : x.at === "max" ? 1 : 0);
    return rank(a) - rank(b);
  }
  return ordering.compare(a.version, b.version);
}

/**
 * The event's single kind and value, or a reason it has none. Records that did not go through
 * parseOsvRecord may break the type: the fields are checked here, not trusted.
 */
function readEvent(event: OsvEvent): { kind: EventKind; value: string } | string {
  if (typeof event !== "object" || event === null) return "an event is not an object";
  const fields = event as Partial<Record<EventKind, unknown>>;
  const present = EVENT_KINDS.filter((k) => fields[k] !== undefined);
  if (present.length !== 1) return `an event must have exactly one of ${EVENT_KINDS.join(", ")}`;
  const kind = present[0];
  const value = fields[kind];
  if (typeof value !== "string") return `${kind} is not a string`;
  return { kind, value };
}

function parseEvents(range: OsvRange, ordering: VersionOrdering<unknown>): ParsedEvent[] | string {
  if (!Array.isArray(range.events)) return "the range has no events";
  const parsed: ParsedEvent[] = [];
  for (const event of range.events) {
    const read = readEvent(event);
    if (typeof read === "string") return read;
    const { kind, value } = read;
    if (kind === "introduced" && value === "0") {
      parsed.push({ kind, bound: { at: "min" }, value });
    } else if (kind === "limit" && value.includes("*")) {
      parsed.push({ kind, bound: { at: "max" }, value });
    } else {
      const version = ordering.parse(value);
      if (version === undefined) return `${kind} ${JSON.stringify(value)} is not a valid ${ordering.name} version`;
      parsed.push({ kind, bound: { at: "version", version }, value });
    }
  }
  return parsed;
}

/** The schema's IncludedInRanges for one range, V already parsed under the range's ordering. */
function rangeIncludes(ordering: VersionOrdering<unknown>, events: ParsedEvent[], v: unknown): boolean {
  const here: Bound = { at: "version", version: v };
  const limits = events.filter((e) => e.kind === "limit");
  if (limits.length > 0 && !limits.some((e) => compareBound(ordering, here, e.bound) < 0)) return false;
  const sorted = [...events].sort((a, b) => compareBound(ordering, a.bound, b.bound));
  let vulnerable = false;
  for (const event of sorted) {
    const c = compareBound(ordering, here, event.bound);
    if (event.kind === "introduced") {
      if (c >= 0) vulnerable = true;
    } else if (event.kind === "fixed") {
      if (c >= 0) vulnerable = false;
    } else if (event.kind === "last_affected") {
      if (c > 0) vulnerable = false;
    }
  }
  return vulnerable;
}

/** @throws UnknownEcosystemError, InvalidVersionError */
function readVersion(osvEcosystem: string, version: string): { ecosystem: Ecosystem; parsed: unknown } {
  const { ecosystem } = resolveEcosystem(osvEcosystem);
  const parsed = ecosystem.ordering.parse(version);
  if (parsed === undefined) throw new InvalidVersionError(osvEcosystem, version);
  return { ecosystem, parsed };
}

function orderingOf(ecosystem: Ecosystem, type: string): VersionOrdering<unknown> | undefined {
  if (type === "SEMVER") return ecosystem.semverOrdering;
  if (type === "ECOSYSTEM") return ecosystem.ordering;
  return undefined;
}

/** Whether `version` is in the explicit list: the same string, or equal under the ordering. */
function listedIn(versions: unknown, ordering: VersionOrdering<unknown>, version: string, parsed: unknown): boolean {
  if (!Array.isArray(versions)) return false;
  return versions.some((listed) => {
    if (typeof listed !== "string") return false;
    if (listed === version) return true;
    const other = ordering.parse(listed);
    return other !== undefined && ordering.compare(parsed, other) === 0;
  });
}

/**
 * Evaluates one `affected[]` entry for a version, ignoring the entry's package: the version is
 * read in the given ecosystem (normally the entry's own `package.ecosystem`).
 *
 * A range whose bound does not parse in its ordering, with an event carrying zero or several
 * fields, or of an unknown type, is unevaluable: it includes nothing and is listed in
 * `unevaluable`; the other ranges and the `versions` list still count. A SEMVER range in an
 * ecosystem whose version is not SemVer (a PyPI `1.0.post1`) is unevaluable the same way.
 *
 * @throws UnknownEcosystemError, InvalidVersionError (the version, not the record's bounds)
 */
export function evaluateAffected(osvEcosystem: string, version: string, entry: OsvAffected): AffectedVerdict {
  const { ecosystem, parsed } = readVersion(osvEcosystem, version);
  const unevaluable: UnevaluableRange[] = [];
  let inRange = false;
  const ranges = Array.isArray(entry.ranges) ? entry.ranges : [];
  ranges.forEach((range, index) => {
    if (range?.type === "GIT") return;
    const ordering = orderingOf(ecosystem, range?.type);
    if (ordering === undefined) {
      unevaluable.push({ range: index, reason: `unknown range type ${JSON.stringify(range?.type)}` });
      return;
    }
    const v = ordering === ecosystem.ordering ? parsed : ordering.parse(version);
    if (v === undefined) {
      unevaluable.push({ range: index, reason: `${JSON.stringify(version)} is not a ${ordering.name} version` });
      return;
    }
    const events = parseEvents(range, ordering);
    if (typeof events === "string") {
      unevaluable.push({ range: index, reason: events });
      return;
    }
    if (rangeIncludes(ordering, events, v)) inRange = true;
  });

  if (listedIn(entry.versions, ecosystem.ordering, version, parsed)) {
    return { affected: true, matchedBy: "versions", unevaluable };
  }
  return inRange ? { affected: true, matchedBy: "ranges", unevaluable } : { affected: false, unevaluable };
}

/**
 * Whether the package at its version is affected by one `affected[]` entry: the entry names the
 * same package (see `samePackage`; an entry without a package is read as the caller's) and the
 * version is in its `versions` or one of its ranges.
 * @throws UnknownEcosystemError, InvalidVersionError (the caller's ecosystem and version)
 */
export function matchAffected(pkg: PackageVersion, entry: OsvAffected): AffectedVerdict {
  readVersion(pkg.ecosystem, pkg.version);
  if (entry.package !== undefined && !samePackage(pkg, entry.package)) return { affected: false, unevaluable: [] };
  return evaluateAffected(pkg.ecosystem, pkg.version, entry);
}

/**
 * The schema's IsVulnerable: some `affected[]` entry of the record matches the package at its
 * version.
 * @throws UnknownEcosystemError, InvalidVersionError (the caller's ecosystem and version)
 */
export function isVulnerable(pkg: PackageVersion, record: Pick<OsvRecord, "affected">): boolean {
  readVersion(pkg.ecosystem, pkg.version);
  const entries = Array.isArray(record.affected) ? record.affected : [];
  return entries.some((entry) => matchAffected(pkg, entry).affected);
}

/**
 * The version that fixes `version` by one `affected[]` entry: among the ranges that include it,
 * the lowest `fixed` event above it (as the record writes it); undefined when no including range
 * names one (`last_affected` only, no fix yet, or the version is only listed in `versions`).
 * Ranges that cannot be evaluated are skipped, as in `evaluateAffected`.
 * @throws UnknownEcosystemError, InvalidVersionError (the version, not the record's bounds)
 */
export function fixedVersion(osvEcosystem: string, version: string, entry: OsvAffected): string | undefined {
  const { ecosystem, parsed } = readVersion(osvEcosystem, version);
  let best: { ordering: VersionOrdering<unknown>; event: ParsedEvent } | undefined;
  for (const range of Array.isArray(entry.ranges) ? entry.ranges : []) {
    const ordering = range?.type === "GIT" ? undefined : orderingOf(ecosystem, range?.type);
    if (ordering === undefined) continue;
    const v = ordering === ecosystem.ordering ? parsed : ordering.parse(version);
    const events = v === undefined ? undefined : parseEvents(range, ordering);
    if (v === undefined || events === undefined || typeof events === "string" || !rangeIncludes(ordering, events, v)) continue;
    const here: Bound = { at: "version", version: v };
    for (const event of events) {
      if (event.kind !== "fixed" || compareBound(ordering, event.bound, here) <= 0) continue;
      // Ranges of one entry share the ecosystem's ordering, except SEMVER ones: compare within one ordering only.
      if (best === undefined || (best.ordering === ordering && compareBound(ordering, event.bound, best.event.bound) < 0)) best = { ordering, event };
    }
  }
  return best?.event.value;
}
