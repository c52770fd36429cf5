// The parts of an OSV record (https://ossf.github.io/osv-schema/) the matcher reads. Fields are
// optional and loosely typed on purpose: records come from outside, and the matcher checks what it
// uses instead of trusting the shape.

export interface OsvPackage {
  ecosystem: string;
  name: string;
  purl?: string;
}

/** One event of a range; a valid event has exactly one of the four fields. */
export interface OsvEvent {
  introduced?: string;
  fixed?: string;
  last_affected?: string;
  limit?: string;
}

export interface OsvRange {
  /** `SEMVER`, `ECOSYSTEM` or `GIT`. */
  type: string;
  repo?: string;
  events: OsvEvent[];
}

export interface OsvSeverity {
  /** `CVSS_V2`, `CVSS_V3`, `CVSS_V4`, `Ubuntu`, ... */
  type: string;
  score: string;
}

export interface OsvAffected {
  package?: OsvPackage;
  severity?: OsvSeverity[];
  ranges?: OsvRange[];
  versions?: string[];
}

export interface OsvRecord {
  id?: string;
  severity?: OsvSeverity[];
  affected?: OsvAffected[];
}
