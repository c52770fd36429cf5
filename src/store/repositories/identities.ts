import type { Selectable } from "kysely";
import { notFound } from "../../api/errors.js";
import type { Db, IdentityTable } from "../tables.js";

export type IdentityRow = Selectable<IdentityTable>;

export async function insertIdentity(db: Db, row: IdentityRow): Promise<IdentityRow> {
  await db.insertInto("identities").values(row).execute();
  return row;
}

/** Throws NOT_FOUND when the identity does not exist. */
export async function getIdentity(db: Db, uid: string): Promise<IdentityRow> {
  const row = await db.selectFrom("identities").selectAll().where("uid", "=", uid).executeTakeFirst();
  if (!row) throw notFound("identity", uid);
  return row;
}

/** Records that the identity was just used (a successful token exchange). */
export async function touchLastSeen(db: Db, uid: string, now: number): Promise<void> {
  await db.updateTable("identities").set({ last_seen_time: now }).where("uid", "=", uid).execute();
}
