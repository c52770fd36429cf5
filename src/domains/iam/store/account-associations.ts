import type { Selectable } from "kysely";
import { keyTaken } from "../../../store/errors.js";
import { deleteByUidIfAny, NAMED_ORDERABLE, namedResourceReads, resourceTable, unlessTaken, updateByUid } from "../../kit/resource-table.js";
import type { Db } from "../../kit/schema.js";
import type { AccountAssociationTable } from "../tables.js";
import { getGroup } from "./groups.js";

export type AccountAssociationRow = Selectable<AccountAssociationTable>;

/** Sortable account association fields: API name to column. */
export const accountAssociationOrderable = NAMED_ORDERABLE;

/** An association's uid is its group's uid: it sits at the group's depth. */
const ACCOUNT_ASSOCIATIONS = resourceTable("account_associations", "account association", { ownerSegments: 0 });

/** `getAccountAssociation` throws NOT_FOUND when the group has no association; `listAccountAssociations` lists by exact name (`namedResourceReads`). */
export const { get: getAccountAssociation, list: listAccountAssociations } = namedResourceReads(ACCOUNT_ASSOCIATIONS);

/** Inserts a group's association; NOT_FOUND without the group, ALREADY_EXISTS when it has one. */
export async function insertAccountAssociation(db: Db, row: AccountAssociationRow): Promise<AccountAssociationRow> {
  await getGroup(db, row.group_uid);
  await unlessTaken(
    () => db.insertInto("account_associations").values(row).execute(),
    () => keyTaken("account association", row.uid, `group ${row.uid} already has an account association`),
  );
  return row;
}

export type AccountAssociationChange = Omit<AccountAssociationRow, "uid" | "group_uid" | "create_time">;

export function updateAccountAssociation(db: Db, uid: string, change: AccountAssociationChange): Promise<AccountAssociationRow> {
  return updateByUid(db, ACCOUNT_ASSOCIATIONS, uid, change);
}

/** Deletes the account association `uid` if there is one; true when one was deleted (a delete of it is idempotent). */
export function deleteAccountAssociation(db: Db, uid: string): Promise<boolean> {
  return deleteByUidIfAny(db, ACCOUNT_ASSOCIATIONS, uid);
}
