/**
 * The libraries domain's tables: each organization's library index. Column conventions in
 * src/store/tables.ts.
 */

/** One library of an organization: an npm package, a PyPI project or a Maven artifact. */
export interface ArtifactTable {
  /** `<organization uid>/<16 hex>`: the first 8 bytes of sha256(ecosystem NUL name). */
  uid: string;
  /** The organization (a root group) whose index holds it. */
  group_uid: string;
  /** The OSV ecosystem name: `npm`, `PyPI`, `Maven`. */
  ecosystem: string;
  name: string;
  /** `name` in lower case: what `query` matches. */
  name_lower: string;
  description: string;
  latest_version: string;
  version_count: number;
  /** sha256 of the imported metadata as stored: an import of the same metadata changes nothing. */
  digest: string;
  create_time: number;
  update_time: number;
}

/** One version of an artifact. */
export interface ArtifactVersionTable {
  /** `<artifact uid>/<16 hex>`: the first 8 bytes of sha256(version). */
  uid: string;
  artifact_uid: string;
  version: string;
  /** Position in the ecosystem's version ordering, 0 for the lowest: what `order_by=version` sorts by. */
  rank: number;
  /** The version's own description, "" when it has none. */
  description: string;
  size_bytes: number;
  /** Epoch ms; null when the metadata does not say. */
  publish_time: number | null;
  create_time: number;
  update_time: number;
}

/**
 * The name search index: one row per distinct trigram of an artifact's `name_lower` (see
 * trigrams.ts), written and replaced with the artifact.
 */
export interface ArtifactTrigramTable {
  trigram: string;
  artifact_uid: string;
}

export interface LibrariesTables {
  artifacts: ArtifactTable;
  artifact_versions: ArtifactVersionTable;
  artifact_trigrams: ArtifactTrigramTable;
}
