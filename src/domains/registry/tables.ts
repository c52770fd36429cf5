import type { ColumnType } from "kysely";

/** The registry domain's tables: repos, tags and their history, manifests, blobs, uploads; column conventions in src/store/tables.ts. */

export interface RepoTable {
  /** A UIDP under `group_uid`. */
  uid: string;
  group_uid: string;
  /** The organization (root group) uid: repo names are unique in it, as registry paths are `<organization>/<name>`. */
  org_uid: string;
  name: string;
  description: string;
  /** Markdown; "" when none. */
  readme: string;
  /** The immutable tag patterns (immutable-tags.ts), a JSON array of strings; `[]` (the default) when none. */
  immutable_tags: ColumnType<string, string | undefined, string>;
  create_time: number;
  update_time: number;
}

export interface TagTable {
  /** A UIDP under `repo_uid`. */
  uid: string;
  repo_uid: string;
  name: string;
  /** `sha256:<64 hex>` or `sha512:<128 hex>`. */
  digest: string;
  deprecated: number;
  /** The name's forms (tag-forms.ts): a bit set of referrer 1, build date 2, package epoch 4. */
  forms: number;
  create_time: number;
  update_time: number;
  /** When a push (the registry host's, `registry import`) last set the tag, moved or not, epoch ms; 0: never. */
  push_time: ColumnType<number, number | undefined, number>;
}

/**
 * Every digest a tag name of a repo has pointed to, written in the transaction
 * that moves the tag. `seq` counts from 1 per (repo, tag name); history
 * outlives a deleted tag.
 */
export interface TagHistoryTable {
  repo_uid: string;
  tag_name: string;
  seq: number;
  digest: string;
  /** When the tag started to point to `digest`, epoch ms. */
  update_time: number;
}

/** An image manifest or index of a repo, stored whole, with what the API serves from it. */
export interface ManifestTable {
  repo_uid: string;
  /** The digest of `content`: sha256, or sha512 when it was pushed by a sha512 digest. */
  digest: string;
  media_type: string;
  content: Buffer;
  /** Bytes of `content`. */
  size: number;
  kind: "image" | "index";
  /** Config plus layers for an image; 0 for an index. */
  image_size: number;
  /** From the image's config blob when it was known; "" otherwise and for an index. */
  architecture: string;
  os: string;
  /** The manifest's artifactType (an image's config media type when absent); "" when none. */
  artifact_type: string;
  /** Digest of the manifest's subject (referrers API); "" when none. */
  subject_digest: string;
  create_time: number;
}

/** A blob the content store holds whole (written after its bytes were published). */
export interface BlobTable {
  /** `sha256:<64 hex>` or `sha512:<128 hex>`. */
  digest: string;
  size: number;
  create_time: number;
  /** When a push last used it (uploaded, mounted, imported, or named by a manifest it stored); garbage collection spares recent ones. */
  use_time: number;
}

/** A blob a repo may serve: uploaded to it, mounted into it, or imported. */
export interface RepoBlobTable {
  repo_uid: string;
  digest: string;
}

/** A blob upload in progress; its bytes so far are the content store's upload of the same id. */
export interface UploadTable {
  id: string;
  repo_uid: string;
  create_time: number;
}

/** A manifest an index of the repo names. */
export interface ManifestRefTable {
  repo_uid: string;
  parent_digest: string;
  child_digest: string;
}

/** A retention policy (retention.ts): the rules by which old tags and untagged manifests of repos go. */
export interface RetentionPolicyTable {
  /** A UIDP under `group_uid`. */
  uid: string;
  group_uid: string;
  /** The repo it applies to, at or below the group; "" for every repo at or below it. Unique with `group_uid`. */
  repo_uid: string;
  /** 0: no count rule. */
  keep_last: number;
  /** Tag patterns always kept, a JSON array of strings. */
  keep_tags: string;
  /** Keep tags updated within this long, ms; 0: no age rule. */
  expire_after_ms: number;
  /** Untagged manifests pushed longer ago than this go, ms; 0: none go. */
  untagged_grace_ms: number;
  create_time: number;
  update_time: number;
}

/** When retention last ran (one row, `name` "retention"); the lease that lets one replica at a time remove things is the `retention` job's. */
export interface RetentionLeaseTable {
  name: string;
  /** When the last pass ended, epoch ms; 0 before the first. */
  last_run_time: number;
}

/** An upstream registry backing a repo path prefix of an organization (pull-through/). */
export interface UpstreamTable {
  /** A UIDP under `group_uid`, the organization. */
  uid: string;
  group_uid: string;
  name: string;
  /** `https://host[:port]`, no path. */
  url: string;
  /** Name components each ending in `/`; unique with `group_uid`. */
  repo_prefix: string;
  /** Prepended at the upstream; "" or components each ending in `/`. */
  upstream_prefix: string;
  /** "" for anonymous. */
  username: string;
  /** Sealed by the server's secret box; "" for none. */
  password: string;
  tag_freshness_ms: number;
  /** JSON arrays of repo patterns. */
  include_repos: string;
  exclude_repos: string;
  create_time: number;
  update_time: number;
}

/** When a pulled-through tag of a repo was last found current at its upstream (epoch ms). */
export interface UpstreamTagCheckTable {
  repo_uid: string;
  tag: string;
  check_time: number;
}

/** Every table of the domain, by name: composed into the store's Database. */
export interface RegistryTables {
  repos: RepoTable;
  tags: TagTable;
  tag_history: TagHistoryTable;
  manifests: ManifestTable;
  blobs: BlobTable;
  repo_blobs: RepoBlobTable;
  uploads: UploadTable;
  manifest_refs: ManifestRefTable;
  retention_policies: RetentionPolicyTable;
  retention_lease: RetentionLeaseTable;
  upstreams: UpstreamTable;
  upstream_tag_checks: UpstreamTagCheckTable;
}
