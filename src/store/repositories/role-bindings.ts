import type { Selectable } from "kysely";
import { newChildUid } from "../../api/uidp.js";
import type { Db, RoleBindingTable } from "../tables.js";

export type RoleBindingRow = Selectable<RoleBindingTable>;

export async function insertRoleBinding(db: Db, row: RoleBindingRow): Promise<RoleBindingRow> {
  await db.insertInto("role_bindings").values(row).execute();
  return row;
}

/** Binds `identityUid` to `roleUid` on `groupUid` under a new uid. */
export function bindRole(db: Db, groupUid: string, identityUid: string, roleUid: string, now: number): Promise<RoleBindingRow> {
  return insertRoleBinding(db, { uid: newChildUid(groupUid), group_uid: groupUid, identity_uid: identityUid, role_uid: roleUid, create_time: now });
}

/** Every (group, capability) an identity holds through its bindings, unordered. */
export async function grantsOf(db: Db, identityUid: string): Promise<Array<{ group_uid: string; capability: string }>> {
  return db
    .selectFrom("role_bindings")
    .innerJoin("role_capabilities", "role_capabilities.role_uid", "role_bindings.role_uid")
    .select(["role_bindings.group_uid", "role_capabilities.capability"])
    .where("role_bindings.identity_uid", "=", identityUid)
    .distinct()
    .execute();
}
