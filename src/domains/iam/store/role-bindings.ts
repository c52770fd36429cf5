import type { Selectable } from "kysely";
import { keyTaken, rowNotFound } from "../../../store/errors.js";
import type { Page } from "../../../aip/pagination.js";
import { newChildUid } from "../../../aip/uidp.js";
import { applyPage, countRows, type ListScope } from "../../kit/list-query.js";
import { CREATE_TIME_ORDERABLE, deleteByUidIfAny, listQuery, resourceTable, unlessTaken, updateByUid } from "../../kit/resource-table.js";
import type { Db } from "../../kit/schema.js";
import type { RoleBindingTable } from "../tables.js";
import { CACHEABLE, cachedWith } from "../../../store/cached-reads.js";

/** A binding as the API shows it (`managed_by` is the login sync's bookkeeping: people.ts). */
export type RoleBindingRow = Omit<Selectable<RoleBindingTable>, "managed_by">;

export async function insertRoleBinding(db: Db, row: RoleBindingRow, managedBy = ""): Promise<RoleBindingRow> {
  // `managed_by` is written only for a managed binding; the column defaults to "".
  await db.insertInto("role_bindings").values(managedBy === "" ? row : { ...row, managed_by: managedBy }).execute();
  return row;
}

/** Binds `identityUid` to `roleUid` on `groupUid` under a new uid. */
export function bindRole(db: Db, groupUid: string, identityUid: string, roleUid: string, now: number): Promise<RoleBindingRow> {
  return insertRoleBinding(db, { uid: newChildUid(groupUid), group_uid: groupUid, identity_uid: identityUid, role_uid: roleUid, create_time: now });
}

/**
 * Every (group, capability) an identity holds through its bindings, unordered; undefined when the
 * identity does not exist (one query: a caller's existence and grants are read together).
 */
export async function grantsOf(db: Db, identityUid: string): Promise<Array<{ group_uid: string; capability: string }> | undefined> {
  const rows = await db
    .selectFrom("identities")
    .leftJoin("role_bindings", "role_bindings.identity_uid", "identities.uid")
    .leftJoin("role_capabilities", "role_capabilities.role_uid", "role_bindings.role_uid")
    .select(["role_bindings.group_uid", "role_capabilities.capability"])
    .where("identities.uid", "=", identityUid)
    .distinct()
    .execute();
  if (rows.length === 0) return undefined;
  return rows.filter((r): r is { group_uid: string; capability: string } => r.group_uid !== null && r.capability !== null);
}

/** A binding with what responses show of its identity, group and role. */
export interface HydratedRoleBindingRow extends RoleBindingRow {
  identity_name: string;
  identity_description: string;
  identity_claim_match: string;
  identity_static_keys: string;
  group_name: string;
  group_description: string;
  role_name: string;
  role_description: string;
}

/** Sortable binding fields: API name to column. */
export const roleBindingOrderable = {
  ...CREATE_TIME_ORDERABLE,
};

const ROLE_BINDINGS = resourceTable("role_bindings", "roleBinding", { parent: "group_uid", ownerSegments: 1 });

export interface RoleBindingFilter extends ListScope {
  identity?: string;
  group?: string;
  role?: string;
}

function hydrated(db: Db) {
  return db
    .selectFrom("role_bindings")
    .innerJoin("identities", "identities.uid", "role_bindings.identity_uid")
    .innerJoin("groups", "groups.uid", "role_bindings.group_uid")
    .innerJoin("roles", "roles.uid", "role_bindings.role_uid");
}

const HYDRATED_COLUMNS = [
  "role_bindings.uid",
  "role_bindings.group_uid",
  "role_bindings.identity_uid",
  "role_bindings.role_uid",
  "role_bindings.create_time",
  "identities.name as identity_name",
  "identities.description as identity_description",
  "identities.claim_match as identity_claim_match",
  "identities.static_keys as identity_static_keys",
  "groups.name as group_name",
  "groups.description as group_description",
  "roles.name as role_name",
  "roles.description as role_description",
] as const;

/** Throws NOT_FOUND when the binding does not exist. */
export async function getRoleBinding(db: Db, uid: string): Promise<HydratedRoleBindingRow> {
  const row = await hydrated(db).select(HYDRATED_COLUMNS).where("role_bindings.uid", "=", uid).executeTakeFirst();
  if (!row) throw rowNotFound("roleBinding", uid);
  return row;
}

/** One page (up to `limit + 1` rows, in `page.order`), hydrated, and the count of all matches. */
export async function listRoleBindings(db: Db, filter: RoleBindingFilter, page: Page): Promise<{ rows: HydratedRoleBindingRow[]; total: number }> {
  const equals = { identity_uid: filter.identity, group_uid: filter.group, role_uid: filter.role };
  const query = listQuery(db, ROLE_BINDINGS, { equals, uidp: filter.uidp, visible: filter.visible });
  // On SQLite, the page, its rows and the count are cached until the database changes (CACHEABLE), as every listing's are.
  const keys = await applyPage(query.select("role_bindings.uid"), page, "role_bindings").modifyEnd(CACHEABLE).execute();
  const total = await countRows(query, page.total);
  if (keys.length === 0) return { rows: [], total };
  const found = await hydrated(db)
    .select(HYDRATED_COLUMNS)
    .where(
      "role_bindings.uid",
      "in",
      keys.map((k) => k.uid),
    )
    .modifyEnd(CACHEABLE)
    .execute();
  const byUid = new Map(found.map((row) => [row.uid, row]));
  const rows = keys.map((k) => byUid.get(k.uid)).filter((row): row is HydratedRoleBindingRow => row !== undefined);
  return { rows: cachedWith(rows, keys), total };
}

/** Inserts a binding; throws ALREADY_EXISTS when the identity already has the role on the group. */
export function createRoleBinding(db: Db, row: RoleBindingRow): Promise<RoleBindingRow> {
  return unlessTaken(
    () => insertRoleBinding(db, row),
    () => keyTaken("roleBinding", row.uid, `${row.identity_uid} is already bound to ${row.role_uid} on ${row.group_uid}`),
  );
}

/** Changes a binding's role; throws NOT_FOUND or ALREADY_EXISTS. */
export async function setBindingRole(db: Db, uid: string, roleUid: string): Promise<void> {
  await unlessTaken(
    () => updateByUid(db, ROLE_BINDINGS, uid, { role_uid: roleUid }),
    () => keyTaken("roleBinding", uid, `the identity of ${uid} is already bound to ${roleUid} on its group`),
  );
}

/** Deletes the role binding `uid` if there is one; true when one was deleted (a delete of it is idempotent). */
export function deleteRoleBinding(db: Db, uid: string): Promise<boolean> {
  return deleteByUidIfAny(db, ROLE_BINDINGS, uid);
}
