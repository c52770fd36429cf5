// The two errors of OSV import: one record refused (OsvRecordError), or one input that cannot be
// read at all (OsvFeedError). Both name their source: a file path, or `archive.zip!entry/name.json`.

/** Why a record was refused. */
export type OsvRecordErrorKind =
  /** Larger than the record size limit; refused without reading it whole. */
  | "too-large"
  /** Not UTF-8, or not JSON. */
  | "not-json"
  /** JSON, but not an OSV record (an SBOM, a package.json, an array...). */
  | "not-osv"
  /** An OSV record that breaks a rule of the schema or one of our bounds; `path` says where. */
  | "invalid"
  /** A zip entry whose name is absolute or climbs out of the archive with `..`. */
  | "unsafe-name"
  /** The bytes could not be read (an I/O error, a corrupt or encrypted zip entry). */
  | "unreadable";

/**
 * One record refused. `path` is the JSON path of the first problem (`affected[0].ranges[1].events[2]`),
 * empty when the problem is the document as a whole. The message is `<source>: <path>: <reason>`.
 */
export class OsvRecordError extends Error {
  override readonly name = "OsvRecordError";

  constructor(
    readonly source: string,
    readonly path: string,
    readonly reason: string,
    readonly kind: OsvRecordErrorKind,
  ) {
    super(path ? `${source}: ${path}: ${reason}` : `${source}: ${reason}`);
  }
}

/**
 * An input that cannot be read: a path that does not exist or is neither a .json file, a .zip file
 * nor a directory (thrown by readOsvFeed before anything is read), or a directory or zip archive that
 * fails part way (yielded as an entry; what was read before stands). The message is `<source>: <reason>`.
 */
export class OsvFeedError extends Error {
  override readonly name = "OsvFeedError";

  constructor(
    readonly source: string,
    readonly reason: string,
  ) {
    super(`${source}: ${reason}`);
  }
}
