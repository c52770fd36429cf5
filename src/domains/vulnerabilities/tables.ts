/**
 * The vulnerabilities domain's tables: OSV records as imported, the names (ids and aliases) that
 * find them, and the advisories derived from them. Column conventions in src/store/tables.ts.
 */

/** One OSV record, the newest `modified` imported. Withdrawn records stay (as documents). */
export interface OsvRecordTable {
  /** The OSV id (`RUSTSEC-2016-0001`); named `uid` because the list machinery pages on `uid`. */
  uid: string;
  /** `modified` as the record writes it (RFC 3339, any precision): compared exactly on import. */
  modified: string;
  /** `modified` in epoch ms, for ordering. */
  modified_time: number;
  /** `withdrawn` in epoch ms; null while the record stands. */
  withdrawn_time: number | null;
  /** The record's JSON text as parsed (unknown fields kept): the document served. */
  document: string;
}

/**
 * The names a record is found by: its id and each alias (`CVE-2016-10931`, `GHSA-...`). A name may
 * find several records (two databases aliasing one CVE).
 */
export interface OsvNameTable {
  name: string;
  record_uid: string;
}

/**
 * An advisory: one (record, affected package) pair. Rows exist for withdrawn records too (they are
 * documents); a `withdrawn_time` keeps them out of the advisories served.
 */
export interface AdvisoryTable {
  /** 40 hex characters: the first 20 bytes of sha256(advisory id NUL ecosystem NUL name). */
  uid: string;
  /** The OSV record's id. */
  advisory_id: string;
  /** The OSV ecosystem as the record writes it (`crates.io`, `Debian:12`). */
  ecosystem: string;
  artifact_name: string;
  /**
   * JSON array of the record's `affected[]` entries naming this package (ranges and versions),
   * without their `database_specific` and `ecosystem_specific` objects (the document keeps them).
   */
  affected: string;
  /** JSON array of the record's aliases. */
  aliases: string;
  /** The record's summary ("" when none). */
  summary: string;
  /** JSON array of OSV severities: the entries' own, else the record's. */
  severity: string;
  /** The record's `withdrawn` in epoch ms; null while it stands. */
  withdrawn_time: number | null;
  /** The record's `published` (else `modified`), epoch ms. */
  create_time: number;
  /** The record's `modified`, epoch ms. */
  update_time: number;
  /** A digest of the columns above, new whenever the row is written anew: what a cached message of it is valid for. */
  etag: string;
}

/**
 * An advisory feed a server keeps current (`serve --advisory-feed`), by URL: what its last answer
 * said (validators for the next conditional GET), how its last sync went, and who syncs it now.
 * Rows are made when a feed is first synced and never deleted (a feed dropped from the flags keeps
 * its row; added again, it resumes).
 */
export interface AdvisoryFeedTable {
  url: string;
  /** The `ETag` of the last answer imported ("" when none): sent as `If-None-Match`. */
  etag: string;
  /** The `Last-Modified` of the last answer imported ("" when none): sent as `If-Modified-Since`. */
  last_modified: string;
  /** A folder feed: the newest `modified` of its `modified_id.csv` imported ("" before the first sync). */
  cursor: string;
  /** When a server may sync it next: after a success, the interval; after a failure, the backoff. */
  next_attempt_time: number;
  last_attempt_time: number;
  /** 0 until the first success. */
  last_success_time: number;
  /** Failures since the last success (the backoff's exponent). */
  failures: number;
  /** Why the last attempt failed; "" after a success. */
  last_error: string;
  /** The counts of the last sync that read records. */
  records_read: number;
  records_added: number;
  records_updated: number;
  records_unchanged: number;
  records_rejected: number;
}

export interface VulnerabilitiesTables {
  advisory_feeds: AdvisoryFeedTable;
  osv_records: OsvRecordTable;
  osv_names: OsvNameTable;
  advisories: AdvisoryTable;
}
