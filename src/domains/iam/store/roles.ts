import type { Selectable } from "kysely";
import { keyTaken, rowNotFound, resourceInUse } from "../../../store/errors.js";
import type { Page } from "../../../aip/pagination.js";
import { listConditions, type UidpFilter, type Visibility } from "../../kit/list-query.js";
import { getByUid, listPage, resourceTable, TIMES_ORDERABLE, unlessTaken, updateByUid } from "../../kit/resource-table.js";
import type { Db } from "../../kit/schema.js";
import type { RoleTable } from "../tables.js";

import type { StoredBuiltInRole as BuiltInRole } from "../../../access/capabilities.js";
export type { BuiltInRole };

/**
 * Makes the stored built-in roles equal `roles` (names, descriptions, capability
 * sets). Idempotent, also when several processes run it at once (replicas starting
 * together): every write is an upsert or a delete. Run at start-up so a release can
 * change what they grant.
 */
export async function syncBuiltInRoles(db: Db, roles: BuiltInRole[], now: number): Promise<void> {
  for (const role of roles) {
    // No conflict target: a concurrent insert of the same role conflicts on the name index as well
    // as on the uid, and only a target-less DO NOTHING takes both (PostgreSQL raises on an index
    // that is not the target). Then the update brings an existing row up to date.
    await db
      .insertInto("roles")
      .values({ uid: role.uid, group_uid: "", name: role.name, description: role.description, built_in: 1, create_time: now, update_time: now })
      .onConflict((oc) => oc.doNothing())
      .execute();
    await db.updateTable("roles").set({ name: role.name, description: role.description }).where("uid", "=", role.uid).execute();
    if (role.capabilities.length > 0) {
      await db
        .insertInto("role_capabilities")
        .values(role.capabilities.map((capability) => ({ role_uid: role.uid, capability })))
        .onConflict((oc) => oc.columns(["role_uid", "capability"]).doNothing())
        .execute();
    }
    let extra = db.deleteFrom("role_capabilities").where("role_uid", "=", role.uid);
    if (role.capabilities.length > 0) extra = extra.where("capability", "not in", role.capabilities);
    await extra.execute();
  }
}

export type RoleRow = Selectable<RoleTable>;

/** A role row with its capability names, sorted. */
export interface RoleWithCapabilities extends RoleRow {
  capabilities: string[];
}

/** Sortable role fields: API name to column. */
export const roleOrderable = {
  name: "name",
  ...TIMES_ORDERABLE,
};

const ROLES = resourceTable("roles", "role", { ownerSegments: 1 });

export interface RoleFilter {
  name?: string;
  uidp: UidpFilter;
  /** Where custom roles may be listed; built-in roles are visible to everyone. */
  visible: Visibility;
}

async function withCapabilities(db: Db, rows: RoleRow[]): Promise<RoleWithCapabilities[]> {
  if (rows.length === 0) return [];
  const caps = await db
    .selectFrom("role_capabilities")
    .select(["role_uid", "capability"])
    .where(
      "role_uid",
      "in",
      rows.map((r) => r.uid),
    )
    .execute();
  const byRole = new Map<string, string[]>();
  for (const { role_uid, capability } of caps) byRole.set(role_uid, [...(byRole.get(role_uid) ?? []), capability]);
  return rows.map((row) => ({ ...row, capabilities: (byRole.get(row.uid) ?? []).sort() }));
}

/** The roles among `uids` that exist, with their capabilities, by uid. */
export async function rolesByUid(db: Db, uids: readonly string[]): Promise<Map<string, RoleWithCapabilities>> {
  const wanted = [...new Set(uids)];
  if (wanted.length === 0) return new Map();
  const rows = await db.selectFrom("roles").selectAll().where("uid", "in", wanted).execute();
  return new Map((await withCapabilities(db, rows)).map((role) => [role.uid, role]));
}

/** Throws NOT_FOUND when the role does not exist. */
export async function getRole(db: Db, uid: string): Promise<RoleWithCapabilities> {
  return (await withCapabilities(db, [await getByUid(db, ROLES, uid)]))[0];
}

/**
 * One page of roles (up to `limit + 1`, in `page.order`) and the count of all
 * matches: the built-in roles plus the custom roles in the visible subtrees.
 */
export async function listRoles(db: Db, filter: RoleFilter, page: Page): Promise<{ rows: RoleWithCapabilities[]; total: number }> {
  const { rows, total } = await listPage(
    db,
    ROLES,
    {
      equals: { name: filter.name },
      uidp: filter.uidp,
      where: (eb) => {
        const visibility = listConditions(eb, ROLES.columns, {}, filter.visible);
        return visibility.length > 0 ? [eb.or([eb("roles.built_in", "=", 1), ...visibility])] : [];
      },
    },
    page,
  );
  return { rows: await withCapabilities(db, rows), total };
}

function nameTaken(name: string) {
  return keyTaken("role", name, `another role of the group is already named "${name}"`);
}

/** Inserts a custom role in an existing group; throws NOT_FOUND (group) or ALREADY_EXISTS (name). */
export async function insertRole(db: Db, row: RoleRow, capabilities: string[]): Promise<RoleWithCapabilities> {
  const group = await db.selectFrom("groups").select("uid").where("uid", "=", row.group_uid).executeTakeFirst();
  if (!group) throw rowNotFound("group", row.group_uid);
  await unlessTaken(() => db.insertInto("roles").values(row).execute(), () => nameTaken(row.name));
  if (capabilities.length > 0) {
    await db.insertInto("role_capabilities").values(capabilities.map((capability) => ({ role_uid: row.uid, capability }))).execute();
  }
  return { ...row, capabilities: [...capabilities].sort() };
}

/** Writes a role's name, description and capability set. Run in a transaction. Throws NOT_FOUND or ALREADY_EXISTS. */
export async function updateRole(
  db: Db,
  uid: string,
  change: Pick<RoleRow, "name" | "description" | "update_time">,
  capabilities: string[],
): Promise<RoleWithCapabilities> {
  const row = await unlessTaken(() => updateByUid(db, ROLES, uid, change), () => nameTaken(change.name));
  await db.deleteFrom("role_capabilities").where("role_uid", "=", uid).execute();
  if (capabilities.length > 0) {
    await db.insertInto("role_capabilities").values(capabilities.map((capability) => ({ role_uid: uid, capability }))).execute();
  }
  return { ...row, capabilities: [...capabilities].sort() };
}

/**
 * Deletes a custom role no binding uses. Throws NOT_FOUND, or FAILED_PRECONDITION
 * with a `RESOURCE_IN_USE` violation while a binding uses it. Run in a transaction.
 */
export async function deleteRole(db: Db, uid: string): Promise<void> {
  await getRole(db, uid);
  const bound = await db.selectFrom("role_bindings").select("uid").where("role_uid", "=", uid).limit(1).executeTakeFirst();
  if (bound) {
    throw resourceInUse(uid, `role ${uid} is still bound (${bound.uid})`);
  }
  await db.deleteFrom("role_capabilities").where("role_uid", "=", uid).execute();
  await db.deleteFrom("roles").where("uid", "=", uid).execute();
}

