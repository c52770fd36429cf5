// The OSV record (https://ossf.github.io/osv-schema/) as parseOsvRecord returns it: the feed's own
// JSON, field names and all, so a record is also the document that is stored and served. Fields
// the schema defines are checked (see parse.ts); `null` for an optional field reads as absent and
// is dropped; fields the schema does not define (newer schema versions add some) are kept as they
// are. `database_specific` and `ecosystem_specific` are opaque objects.

export type OsvRangeType = "SEMVER" | "ECOSYSTEM" | "GIT";

/** One version event: exactly one of the four keys. */
export type OsvEvent =
  | { introduced: string }
  | { fixed: string }
  | { last_affected: string }
  | { limit: string };

export interface OsvRange {
  type: OsvRangeType;
  /** Required for GIT ranges. */
  repo?: string;
  /** At least one event; at least one `introduced`; never both `fixed` and `last_affected`. */
  events: OsvEvent[];
  database_specific?: Record<string, unknown>;
}

export interface OsvPackage {
  /** An OSV ecosystem, optionally with a `:suffix` (`Debian:12`, `Ubuntu:22.04:LTS`). */
  ecosystem: string;
  name: string;
  /** A package URL (`pkg:...`). */
  purl?: string;
}

export interface OsvSeverity {
  /** `CVSS_V2`, `CVSS_V3`, `CVSS_V4`, `Ubuntu`, or a type a later schema adds. */
  type: string;
  score: string;
}

export interface OsvAffected {
  /** Absent on entries that only name commits of a repository (GIT ranges). */
  package?: OsvPackage;
  severity?: OsvSeverity[];
  ranges?: OsvRange[];
  versions?: string[];
  ecosystem_specific?: Record<string, unknown>;
  database_specific?: Record<string, unknown>;
}

export interface OsvReference {
  /** `ADVISORY`, `ARTICLE`, `DETECTION`, `DISCUSSION`, `REPORT`, `FIX`, `INTRODUCED`, `GIT`, `PACKAGE`, `EVIDENCE`, `WEB`, or a later one. */
  type: string;
  url: string;
}

export interface OsvCredit {
  name: string;
  contact?: string[];
  type?: string;
}

export interface OsvRecord {
  schema_version?: string;
  id: string;
  /** RFC 3339; a record with a later `modified` replaces an earlier one (compareOsvTimes). */
  modified: string;
  published?: string;
  /** Set when the record is withdrawn: it is then no longer an advisory, but still a document. */
  withdrawn?: string;
  aliases?: string[];
  related?: string[];
  upstream?: string[];
  summary?: string;
  details?: string;
  severity?: OsvSeverity[];
  affected?: OsvAffected[];
  references?: OsvReference[];
  credits?: OsvCredit[];
  database_specific?: Record<string, unknown>;
}

/**
 * The bounds a record must keep (documented in docs/decisions.md, "OSV import: what is accepted").
 * Lengths count UTF-16 code units (JavaScript string length); counts are array lengths.
 */
export const OSV_LIMITS = {
  /** Bytes of one record file or zip entry; larger ones are refused without being read whole. */
  recordBytes: 8 * 1024 * 1024,
  id: 256,
  /** Each of `aliases`, `related`, `upstream`. */
  idList: 10_000,
  schemaVersion: 32,
  summary: 8_192,
  severity: 100,
  severityType: 64,
  severityScore: 1_024,
  affected: 10_000,
  ecosystem: 256,
  packageName: 1_024,
  purl: 2_048,
  ranges: 1_000,
  repo: 2_048,
  events: 10_000,
  /** A version in an event or in `versions`. */
  version: 1_024,
  versions: 100_000,
  references: 10_000,
  referenceType: 64,
  url: 8_192,
  credits: 1_000,
  creditName: 1_024,
  contacts: 100,
  contact: 1_024,
  creditType: 64,
  /** Levels of nesting of arrays and objects (the schema's own deepest is 5; `database_specific` is free-form). */
  depth: 64,
} as const;
