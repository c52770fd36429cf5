import type { Selectable } from "kysely";
import { keyTaken, resourceNotEmpty } from "../../../store/errors.js";
import { descendantRange } from "../../../aip/uidp.js";
import { NAMED_ORDERABLE, namedResourceReads, resourceTable, unlessTaken, updateByUid } from "../../kit/resource-table.js";
import type { TableWith } from "../../kit/domain.js";
import type { Db } from "../../kit/schema.js";
import type { GroupTable } from "../tables.js";

export type GroupRow = Selectable<GroupTable>;

/** Sortable group fields: API name to column. */
export const groupOrderable = NAMED_ORDERABLE;

const GROUPS = resourceTable("groups", "group", { parent: "parent_uid", ownerSegments: 0 });

/** `getGroup` throws NOT_FOUND when the group does not exist; `listGroups` lists by exact name (`namedResourceReads`). */
export const { get: getGroup, list: listGroups } = namedResourceReads(GROUPS);

/**
 * Inserts a group. Throws NOT_FOUND when the parent does not exist and
 * ALREADY_EXISTS when the name is taken among its siblings (organizations:
 * among all organizations).
 */
export async function insertGroup(db: Db, row: GroupRow): Promise<GroupRow> {
  if (row.parent_uid !== "") await getGroup(db, row.parent_uid);
  const where = row.parent_uid === "" ? "an organization" : `a group under ${row.parent_uid}`;
  await unlessTaken(
    () => db.insertInto("groups").values(row).execute(),
    () => keyTaken("group", row.name, `${where} is already named "${row.name}"`),
  );
  return row;
}

/** Writes name and description; throws NOT_FOUND or ALREADY_EXISTS (sibling name taken). */
export function updateGroup(db: Db, uid: string, change: Pick<GroupRow, "name" | "description" | "update_time">): Promise<GroupRow> {
  return unlessTaken(
    () => updateByUid(db, GROUPS, uid, change),
    () => keyTaken("group", change.name, `a sibling of ${uid} is already named "${change.name}"`),
  );
}

/**
 * Deletes a group with no child group and no row in `ownedByGroup` (every domain's tables
 * whose rows belong to a group: `Ownership`). Throws NOT_FOUND, or
 * FAILED_PRECONDITION / RESOURCE_NOT_EMPTY when anything lies below it.
 */
export async function deleteGroup(db: Db, uid: string, ownedByGroup: readonly TableWith<"group_uid">[]): Promise<void> {
  await getGroup(db, uid);
  const { low, high } = descendantRange(uid);
  const child = await db
    .selectFrom("groups")
    .select("uid")
    .where("uid", ">=", low)
    .where("uid", "<", high)
    .limit(1)
    .executeTakeFirst();
  if (child) throw resourceNotEmpty("group", uid);
  for (const table of ownedByGroup) {
    const owned = await db.selectFrom(table).select("group_uid").where("group_uid", "=", uid).limit(1).executeTakeFirst();
    if (owned) throw resourceNotEmpty("group", uid);
  }
  await db.deleteFrom("groups").where("uid", "=", uid).execute();
}

/** Whether the group `uid` exists and is an organization (a root group). */
export async function isOrganization(db: Db, uid: string): Promise<boolean> {
  const row = await db.selectFrom("groups").select("uid").where("uid", "=", uid).executeTakeFirst();
  return row !== undefined && !uid.includes("/");
}

/**
 * The organizations (root groups) as a subquery of `uid` and `name`, for another domain's query to
 * join (`.innerJoin(organizations(db).as("orgs"), "orgs.uid", …)`): one statement, the rows read
 * by their owner's terms.
 */
export function organizations(db: Db) {
  return db.selectFrom("groups").select(["groups.uid", "groups.name"]).where("groups.parent_uid", "=", "");
}

/** The organization (root group) named `name`, if any. */
export async function findOrganizationByName(db: Db, name: string): Promise<GroupRow | undefined> {
  return db.selectFrom("groups").selectAll().where("parent_uid", "=", "").where("name", "=", name).executeTakeFirst();
}

