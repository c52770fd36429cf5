import type { Selectable } from "kysely";
import { notFound } from "../../../store/errors.js";
import type { Page } from "../../../api/pagination.js";
import { applyPage, countRows, listConditions, type UidColumns, type UidpFilter, type Visibility } from "../../../store/list-query.js";
import type { Db } from "../../../store/tables.js";
import type { GroupInviteTable } from "../tables.js";
import { getGroup } from "./groups.js";

export type GroupInviteRow = Selectable<GroupInviteTable>;

/** Sortable invite fields: API name to column. */
export const groupInviteOrderable = {
  create_time: "create_time",
  created_at: "create_time",
  expiration_time: "expire_time",
};

const COLUMNS: UidColumns = { uid: "group_invites.uid", parent: "group_invites.group_uid", ownerSegments: 1 };

export interface GroupInviteFilter {
  roleUid?: string;
  uidp: UidpFilter;
  visible: Visibility;
}

/** Throws NOT_FOUND when the invite does not exist. */
export async function getGroupInvite(db: Db, uid: string): Promise<GroupInviteRow> {
  const row = await db.selectFrom("group_invites").selectAll().where("uid", "=", uid).executeTakeFirst();
  if (!row) throw notFound("group invite", uid);
  return row;
}

/** The invite whose code hashes to `codeHash`, if any. */
export async function findGroupInviteByCodeHash(db: Db, codeHash: string): Promise<GroupInviteRow | undefined> {
  return db.selectFrom("group_invites").selectAll().where("code_hash", "=", codeHash).executeTakeFirst();
}

function filtered(db: Db, filter: GroupInviteFilter) {
  return db.selectFrom("group_invites").where((eb) =>
    eb.and([...(filter.roleUid ? [eb("role_uid", "=", filter.roleUid)] : []), ...listConditions(eb, COLUMNS, filter.uidp, filter.visible)]),
  );
}

/** One page (up to `limit + 1` rows, in `page.order`) and the count of all matches. */
export async function listGroupInvites(db: Db, filter: GroupInviteFilter, page: Page): Promise<{ rows: GroupInviteRow[]; total: number }> {
  const rows = await applyPage(filtered(db, filter).selectAll(), page, "group_invites").execute();
  const total = await countRows(filtered(db, filter));
  return { rows, total };
}

/** Inserts an invite; NOT_FOUND when its group does not exist. */
export async function insertGroupInvite(db: Db, row: GroupInviteRow): Promise<GroupInviteRow> {
  await getGroup(db, row.group_uid);
  await db.insertInto("group_invites").values(row).execute();
  return row;
}

/** Marks a single-use invite used; false when it already was (a concurrent redemption won). */
export async function markGroupInviteUsed(db: Db, uid: string, time: number): Promise<boolean> {
  const { numUpdatedRows } = await db
    .updateTable("group_invites")
    .set({ used_time: time })
    .where("uid", "=", uid)
    .where("used_time", "is", null)
    .executeTakeFirst();
  return numUpdatedRows > 0n;
}

export async function deleteGroupInvite(db: Db, uid: string): Promise<void> {
  const { numDeletedRows } = await db.deleteFrom("group_invites").where("uid", "=", uid).executeTakeFirst();
  if (numDeletedRows === 0n) throw notFound("group invite", uid);
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
