import type { Kysely, Transaction } from "kysely";

/**
 * Table types. Times are integer epoch milliseconds and booleans 0/1, so rows
 * read back the same on SQLite and PostgreSQL. Uid and name columns use
 * byte-order collation, which the uidp prefix ranges rely on.
 */

export interface GroupTable {
  uid: string;
  /** "" for an organization. */
  parent_uid: string;
  name: string;
  description: string;
  create_time: number;
  update_time: number;
}

export interface IdentityTable {
  /** A UIDP under its group. */
  uid: string;
  group_uid: string;
  name: string;
  description: string;
  /** JSON text: the claim_match object, or "" when the identity uses static keys. */
  claim_match: string;
  /** JSON text: the static_keys object, or "". */
  static_keys: string;
  last_seen_time: number | null;
  create_time: number;
  update_time: number;
}

export interface RoleTable {
  /** Built-in roles have root-level uids; custom roles are UIDPs under their group. */
  uid: string;
  /** "" for built-in roles. */
  group_uid: string;
  name: string;
  description: string;
  built_in: number;
  create_time: number;
  update_time: number;
}

export interface RoleCapabilityTable {
  role_uid: string;
  /** A capability name, e.g. `CAP_IAM_GROUPS_LIST`. */
  capability: string;
}

export interface RoleBindingTable {
  /** A UIDP under `group_uid`. */
  uid: string;
  group_uid: string;
  identity_uid: string;
  role_uid: string;
  create_time: number;
}

export interface SigningKeyTable {
  kid: string;
  algorithm: string;
  /** JSON text of the private JWK. */
  private_jwk: string;
  /** JSON text of the public JWK. */
  public_jwk: string;
  create_time: number;
}

export interface ServerSecretTable {
  name: string;
  /** base64url. */
  value: string;
  create_time: number;
}

export interface IdentityProviderTable {
  /** A UIDP under `group_uid`. */
  uid: string;
  group_uid: string;
  name: string;
  description: string;
  issuer: string;
  client_id: string;
  /** Never returned by the API. */
  client_secret: string;
  /** JSON text: an array of scope strings. */
  additional_scopes: string;
  groups_claim: string;
  /** "" for none. */
  default_role_uid: string;
  create_time: number;
  update_time: number;
}

export interface AccountAssociationTable {
  /** The group's uid (one association per group). */
  uid: string;
  /** Equal to `uid`. */
  group_uid: string;
  name: string;
  description: string;
  amazon_account_id: string;
  google_project_id: string;
  google_project_number: string;
  azure_tenant_id: string;
  /** JSON text: an object, name to Azure client id. */
  azure_client_ids: string;
  /** JSON text: an object, GitHub App id (decimal) to `[{installationId (decimal), name}]`. */
  github_app_installations: string;
  create_time: number;
  update_time: number;
}

export interface GroupInviteTable {
  /** A UIDP under `group_uid`. */
  uid: string;
  group_uid: string;
  role_uid: string;
  email: string;
  /** Hex SHA-256 of the code; the code itself is never stored. */
  code_hash: string;
  single_use: number;
  expire_time: number;
  /** When a single-use invite was redeemed. */
  used_time: number | null;
  create_time: number;
}

export interface ExternalGroupRoleMappingTable {
  /** A UIDP under `identity_provider_uid`. */
  uid: string;
  /** The provider's group. */
  group_uid: string;
  identity_provider_uid: string;
  external_group: string;
  role_uid: string;
  create_time: number;
  update_time: number;
}

export interface TermsAcceptanceTable {
  /** A UIDP under `group_uid`. */
  uid: string;
  group_uid: string;
  doc_id: string;
  /** The accepting identity's uid. */
  accepted_by: string;
  create_time: number;
}

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
  create_time: number;
  update_time: number;
}

export interface TagTable {
  /** A UIDP under `repo_uid`. */
  uid: string;
  repo_uid: string;
  name: string;
  /** `sha256:<64 hex>`. */
  digest: string;
  deprecated: number;
  create_time: number;
  update_time: number;
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
  /** `sha256:<64 hex>` of `content`. */
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
  /** `sha256:<64 hex>`. */
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

export interface Database {
  groups: GroupTable;
  identities: IdentityTable;
  roles: RoleTable;
  role_capabilities: RoleCapabilityTable;
  role_bindings: RoleBindingTable;
  signing_keys: SigningKeyTable;
  server_secrets: ServerSecretTable;
  identity_providers: IdentityProviderTable;
  account_associations: AccountAssociationTable;
  group_invites: GroupInviteTable;
  external_group_role_mappings: ExternalGroupRoleMappingTable;
  terms_acceptances: TermsAcceptanceTable;
  repos: RepoTable;
  tags: TagTable;
  tag_history: TagHistoryTable;
  manifests: ManifestTable;
  blobs: BlobTable;
  repo_blobs: RepoBlobTable;
  uploads: UploadTable;
  manifest_refs: ManifestRefTable;
}

/** Repositories take either the database or an open transaction. */
export type Db = Kysely<Database> | Transaction<Database>;
