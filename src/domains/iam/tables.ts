import type { ColumnType, Generated } from "kysely";

/** The IAM domain's tables: groups, identities, roles, bindings and the extras; column conventions in src/store/tables.ts. */

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
  /** A pull token's password, SHA-256 hex; "" (the default) for any other identity. */
  pull_token_hash: Generated<string>;
  /** When a pull token's password stops being accepted; null for any other identity. */
  pull_token_expire_time: number | null;
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

/** One row (id 1): a counter triggers advance with every change to what identities are granted. */
export interface GrantsClockTable {
  id: number;
  /** A bigint: a string from PostgreSQL, a number from SQLite. */
  value: number | string;
}

export interface RoleBindingTable {
  /** A UIDP under `group_uid`. */
  uid: string;
  group_uid: string;
  identity_uid: string;
  role_uid: string;
  create_time: number;
  /** The external group role mapping whose login sync made it; "" for a binding a caller made. */
  managed_by: ColumnType<string, string | undefined, string>;
}

export interface IdentityProviderTable {
  /** A UIDP under `group_uid`. */
  uid: string;
  group_uid: string;
  name: string;
  description: string;
  issuer: string;
  client_id: string;
  /** Sealed (src/store/secret-box.ts); never returned by the API. "" for a public (PKCE-only) client. */
  client_secret: string;
  /** 1: a public client, PKCE only. */
  pkce_enabled: number;
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
  /** The last change: an update, or a single-use invite's redemption. */
  update_time: number;
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
  /** Equal to `create_time`: an acceptance is never changed (accepting again keeps the first record). */
  update_time: number;
}

/** Every table of the domain, by name: composed into the store's Database. */
export interface IamTables {
  groups: GroupTable;
  identities: IdentityTable;
  roles: RoleTable;
  role_capabilities: RoleCapabilityTable;
  role_bindings: RoleBindingTable;
  grants_clock: GrantsClockTable;
  identity_providers: IdentityProviderTable;
  account_associations: AccountAssociationTable;
  group_invites: GroupInviteTable;
  external_group_role_mappings: ExternalGroupRoleMappingTable;
  terms_acceptances: TermsAcceptanceTable;
}
