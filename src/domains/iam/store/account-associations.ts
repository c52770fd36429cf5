import type { Selectable } from "kysely";
import { alreadyExists, notFound } from "../../../store/errors.js";
import type { Page } from "../../../api/pagination.js";
import { isUniqueViolation } from "../../../store/dialect.js";
import { applyPage, countRows, listConditions, type UidColumns, type UidpFilter, type Visibility } from "../../../store/list-query.js";
import type { Db } from "../../../store/tables.js";
import type { AccountAssociationTable } from "../tables.js";
import { getGroup } from "./groups.js";

export type AccountAssociationRow = Selectable<AccountAssociationTable>;

/** Sortable account association fields: API name to column. */
export const accountAssociationOrderable = {
  name: "name",
  create_time: "create_time",
  created_at: "create_time",
  update_time: "update_time",
  updated_at: "update_time",
};

/** An association's uid is its group's uid: it sits at the group's depth. */
const COLUMNS: UidColumns = { uid: "account_associations.uid", ownerSegments: 0 };

export interface AccountAssociationFilter {
  name?: string;
  uidp: UidpFilter;
  visible: Visibility;
}

/** Throws NOT_FOUND when the group has no association. */
export async function getAccountAssociation(db: Db, uid: string): Promise<AccountAssociationRow> {
  const row = await db.selectFrom("account_associations").selectAll().where("uid", "=", uid).executeTakeFirst();
  if (!row) throw notFound("account association", uid);
  return row;
}

function filtered(db: Db, filter: AccountAssociationFilter) {
  return db.selectFrom("account_associations").where((eb) =>
    eb.and([...(filter.name ? [eb("name", "=", filter.name)] : []), ...listConditions(eb, COLUMNS, filter.uidp, filter.visible)]),
  );
}

/** One page (up to `limit + 1` rows, in `page.order`) and the count of all matches. */
export async function listAccountAssociations(db: Db, filter: AccountAssociationFilter, page: Page): Promise<{ rows: AccountAssociationRow[]; total: number }> {
  const rows = await applyPage(filtered(db, filter).selectAll(), page, "account_associations").execute();
  const total = await countRows(filtered(db, filter));
  return { rows, total };
}

/** Inserts a group's association; NOT_FOUND without the group, ALREADY_EXISTS when it has one. */
export async function insertAccountAssociation(db: Db, row: AccountAssociationRow): Promise<AccountAssociationRow> {
  await getGroup(db, row.group_uid);
  try {
    await db.insertInto("account_associations").values(row).execute();
  } catch (error) {
    if (isUniqueViolation(error)) throw alreadyExists("account association", row.uid, `group ${row.uid} already has an account association`);
    throw error;
  }
  return row;
}

export type AccountAssociationChange = Omit<AccountAssociationRow, "uid" | "group_uid" | "create_time">;

export async function updateAccountAssociation(db: Db, uid: string, change: AccountAssociationChange): Promise<AccountAssociationRow> {
  const row = await db.updateTable("account_associations").set(change).where("uid", "=", uid).returningAll().executeTakeFirst();
  if (!row) throw notFound("account association", uid);
  return row;
}

export async function deleteAccountAssociation(db: Db, uid: string): Promise<void> {
  const { numDeletedRows } = await db.deleteFrom("account_associations").where("uid", "=", uid).executeTakeFirst();
  if (numDeletedRows === 0n) throw notFound("account association", uid);
}
