import type { Selectable } from "kysely";
import type { Page } from "../../../aip/pagination.js";
import type { ListScope } from "../../kit/list-query.js";
import { deleteByUidIfAny, getByUid, listPage, resourceTable, TIMES_ORDERABLE, updateByUid } from "../../kit/resource-table.js";
import type { Db } from "../../kit/schema.js";
import type { GroupInviteTable } from "../tables.js";
import { getGroup } from "./groups.js";

export type GroupInviteRow = Selectable<GroupInviteTable>;

/** Sortable invite fields: API name to column. */
export const groupInviteOrderable = {
  ...TIMES_ORDERABLE,
  expiration_time: "expire_time",
};

const GROUP_INVITES = resourceTable("group_invites", "group invite", { parent: "group_uid", ownerSegments: 1 });

export interface GroupInviteFilter extends ListScope {
  roleUid?: string;
}

/** Throws NOT_FOUND when the invite does not exist. */
export function getGroupInvite(db: Db, uid: string): Promise<GroupInviteRow> {
  return getByUid(db, GROUP_INVITES, uid);
}

/** The invite whose code hashes to `codeHash`, if any. */
export async function findGroupInviteByCodeHash(db: Db, codeHash: string): Promise<GroupInviteRow | undefined> {
  return db.selectFrom("group_invites").selectAll().where("code_hash", "=", codeHash).executeTakeFirst();
}

/** One page (up to `limit + 1` rows, in `page.order`) and the count of all matches. */
export function listGroupInvites(db: Db, { roleUid, uidp, visible }: GroupInviteFilter, page: Page): Promise<{ rows: GroupInviteRow[]; total: number }> {
  return listPage(db, GROUP_INVITES, { equals: { role_uid: roleUid }, uidp, visible }, page);
}

/** Inserts an invite; NOT_FOUND when its group does not exist. */
export async function insertGroupInvite(db: Db, row: GroupInviteRow): Promise<GroupInviteRow> {
  await getGroup(db, row.group_uid);
  await db.insertInto("group_invites").values(row).execute();
  return row;
}

/** Writes what an update may change of invite `uid` and returns the row; throws NOT_FOUND. */
export function updateGroupInvite(db: Db, uid: string, change: Pick<GroupInviteRow, "role_uid" | "email" | "expire_time" | "update_time">): Promise<GroupInviteRow> {
  return updateByUid(db, GROUP_INVITES, uid, change);
}

/** Marks a single-use invite used at `time` (a change: its update time too); false when it already was (a concurrent redemption won). */
export async function markGroupInviteUsed(db: Db, uid: string, time: number): Promise<boolean> {
  const { numUpdatedRows } = await db
    .updateTable("group_invites")
    .set({ used_time: time, update_time: time })
    .where("uid", "=", uid)
    .where("used_time", "is", null)
    .executeTakeFirst();
  return numUpdatedRows > 0n;
}

/** Deletes the invite `uid` if there is one; true when one was deleted (a delete of it is idempotent). */
export function deleteGroupInvite(db: Db, uid: string): Promise<boolean> {
  return deleteByUidIfAny(db, GROUP_INVITES, uid);
}


/** The uid of an existing binding of `identityUid` to `roleUid` on `groupUid`, if any. */
export async function existingBinding(db: Db, groupUid: string, identityUid: string, roleUid: string): Promise<string | undefined> {
  const row = await db
    .selectFrom("role_bindings")
    .select("uid")
    .where("group_uid", "=", groupUid)
    .where("identity_uid", "=", identityUid)
    .where("role_uid", "=", roleUid)
    .executeTakeFirst();
  return row?.uid;
}

/** True when the identity exists (a token may outlive its identity). */
export async function identityExists(db: Db, uid: string): Promise<boolean> {
  return (await db.selectFrom("identities").select("uid").where("uid", "=", uid).executeTakeFirst()) !== undefined;
}
