import type { Insertable, Selectable } from "kysely";
import { selfAndAncestors } from "../../../../aip/uidp.js";
import { keyTaken } from "../../../../store/errors.js";
import type { Page } from "../../../../aip/pagination.js";
import { deleteByUid, namedResourceReads, NAMED_ORDERABLE, resourceTable, unlessTaken, updateByUid, type NameFilter } from "../../../kit/resource-table.js";
import type { Db } from "../../../kit/schema.js";
import { getGroup } from "../../../iam/index.js";
import type { TrustedKeyTable } from "../tables.js";

export type TrustedKeyRow = Selectable<TrustedKeyTable>;

/** Sortable key fields: API name to column. */
export const trustedKeyOrderable = { ...NAMED_ORDERABLE };

const KEYS = resourceTable("trusted_keys", "trusted key", { parent: "group_uid", ownerSegments: 1 });

function normalized(row: TrustedKeyRow): TrustedKeyRow {
  // bigint columns come back as strings from some drivers.
  return { ...row, create_time: Number(row.create_time), update_time: Number(row.update_time) };
}

const reads = namedResourceReads(KEYS);

/** Throws NOT_FOUND when the key does not exist. */
export async function getTrustedKey(db: Db, uid: string): Promise<TrustedKeyRow> {
  return normalized(await reads.get(db, uid));
}

/** One page (up to `limit + 1` rows) of the keys in the caller's scope, by exact name when given, and the count of all matches. */
export async function listTrustedKeys(db: Db, filter: NameFilter, page: Page): Promise<{ rows: TrustedKeyRow[]; total: number }> {
  const { rows, total } = await reads.list(db, filter, page);
  return { rows: rows.map(normalized), total };
}

/**
 * Inserts a key; throws NOT_FOUND when the group does not exist, ALREADY_EXISTS when the group
 * has a key of that name or that fingerprint.
 */
export async function insertTrustedKey(db: Db, row: Insertable<TrustedKeyTable>): Promise<TrustedKeyRow> {
  await getGroup(db, row.group_uid);
  if (row.fingerprint !== undefined && row.fingerprint !== "") {
    const same = await db.selectFrom("trusted_keys").select("uid").where("group_uid", "=", row.group_uid).where("fingerprint", "=", row.fingerprint).executeTakeFirst();
    if (same) throw keyTaken("trusted key", row.fingerprint, `group ${row.group_uid} already trusts this key (${same.uid})`);
  }
  await unlessTaken(
    () => db.insertInto("trusted_keys").values(row).execute(),
    () => keyTaken("trusted key", row.name, `group ${row.group_uid} already has a trusted key named ${row.name}`),
  );
  return getTrustedKey(db, row.uid);
}

/** Writes a key's name and description; throws NOT_FOUND, ALREADY_EXISTS for a name taken in the group. */
export async function updateTrustedKey(db: Db, uid: string, change: Pick<TrustedKeyRow, "name" | "description" | "update_time">): Promise<TrustedKeyRow> {
  return normalized(
    await unlessTaken(
      () => updateByUid(db, KEYS, uid, change),
      () => keyTaken("trusted key", change.name, `the group already has a trusted key named ${change.name}`),
    ),
  );
}

/** Deletes a key and what it verified; throws NOT_FOUND when the key does not exist. */
export async function deleteTrustedKey(db: Db, uid: string): Promise<void> {
  await db.deleteFrom("signature_verifications").where("key_uid", "=", uid).execute();
  await deleteByUid(db, KEYS, uid);
}

/** The keys a repo of group `group` trusts: those of the group and of every group above it, by uid. */
export async function keysTrustedAt(db: Db, group: string): Promise<TrustedKeyRow[]> {
  const rows = await db.selectFrom("trusted_keys").selectAll().where("group_uid", "in", selfAndAncestors(group)).orderBy("uid").execute();
  return rows.map(normalized);
}
