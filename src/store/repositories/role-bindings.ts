import type { Selectable } from "kysely";
import type { Db, RoleBindingTable } from "../tables.js";

export type RoleBindingRow = Selectable<RoleBindingTable>;

export async function insertRoleBinding(db: Db, row: RoleBindingRow): Promise<RoleBindingRow> {
  await db.insertInto("role_bindings").values(row).execute();
  return row;
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
