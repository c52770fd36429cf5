import type { JSONWebKeySet } from "jose";
import type { Selectable } from "kysely";
import { rowNotFound } from "../../../store/errors.js";
import type { Page } from "../../../aip/pagination.js";
import type { ListScope } from "../../kit/list-query.js";
import { getByUid, listPage, resourceTable, TIMES_ORDERABLE, updateByUid } from "../../kit/resource-table.js";
import type { Db } from "../../kit/schema.js";
import type { IdentityTable } from "../tables.js";

export type IdentityRow = Selectable<IdentityTable>;

/**
 * The JSON held in `identities.claim_match` ("" when absent). Written by the
 * Identities service, read by the token exchange. Empty values are left out.
 */
export interface StoredClaimMatch {
  issuer?: string;
  issuerPattern?: string;
  subject?: string;
  subjectPattern?: string;
  audience?: string;
  audiencePattern?: string;
  claims?: Record<string, string>;
  claimPatterns?: Record<string, string>;
}

/** The JSON held in `identities.static_keys` ("" when absent). */
export interface StoredStaticKeys {
  issuer: string;
  subject: string;
  /** A JWKS object. */
  issuerKeys: JSONWebKeySet;
  /** Epoch milliseconds; the keys are refused from then on. */
  expirationTime?: number;
}

/** An identity to insert: a pull token's columns only for a pull token (others get "" and null). */
export type NewIdentity = Omit<IdentityRow, "pull_token_hash" | "pull_token_expire_time"> & Partial<Pick<IdentityRow, "pull_token_hash" | "pull_token_expire_time">>;

export async function insertIdentity(db: Db, identity: NewIdentity): Promise<IdentityRow> {
  // Only the columns given: the pull token's have defaults, and an install migrated part way
  // (bootstrap before the later migrations, as tests of older installs do) has no such columns yet.
  await db.insertInto("identities").values(identity).execute();
  return { pull_token_hash: "", pull_token_expire_time: null, ...identity };
}

const IDENTITIES = resourceTable("identities", "identity", { parent: "group_uid", ownerSegments: 1 });

/** Throws NOT_FOUND when the identity does not exist. */
export function getIdentity(db: Db, uid: string): Promise<IdentityRow> {
  return getByUid(db, IDENTITIES, uid);
}

/** Records that the identity was just used (a successful token exchange). */
export async function touchLastSeen(db: Db, uid: string, now: number): Promise<void> {
  await db.updateTable("identities").set({ last_seen_time: now }).where("uid", "=", uid).execute();
}

/** Sortable identity fields: API name to column. */
export const identityOrderable = {
  name: "name",
  ...TIMES_ORDERABLE,
};

export interface IdentityFilter extends ListScope {
  name?: string;
}

/** One page (up to `limit + 1` rows, in `page.order`) and the count of all matches. */
export function listIdentities(db: Db, { name, uidp, visible }: IdentityFilter, page: Page): Promise<{ rows: IdentityRow[]; total: number }> {
  return listPage(db, IDENTITIES, { equals: { name }, uidp, visible }, page);
}

/** Inserts an identity under an existing group; throws NOT_FOUND for a missing group. */
export async function createIdentity(db: Db, row: NewIdentity): Promise<IdentityRow> {
  const group = await db.selectFrom("groups").select("uid").where("uid", "=", row.group_uid).executeTakeFirst();
  if (!group) throw rowNotFound("group", row.group_uid);
  return insertIdentity(db, row);
}

/** Writes the mutable fields; throws NOT_FOUND. */
export function updateIdentity(
  db: Db,
  uid: string,
  change: Pick<IdentityRow, "name" | "description" | "claim_match" | "static_keys" | "update_time">,
): Promise<IdentityRow> {
  return updateByUid(db, IDENTITIES, uid, change);
}

/**
 * Deletes an identity and every role binding of it (they name it; none can
 * outlive it). Run in a transaction. Throws NOT_FOUND.
 */
export async function deleteIdentity(db: Db, uid: string): Promise<void> {
  await getIdentity(db, uid);
  await db.deleteFrom("role_bindings").where("identity_uid", "=", uid).execute();
  await db.deleteFrom("identities").where("uid", "=", uid).execute();
}
