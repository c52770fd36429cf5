import type { Selectable } from "kysely";
import type { Db } from "../../kit/schema.js";
import type { RegistryPasswordTable } from "../tables.js";

export type RegistryPasswordRow = Selectable<RegistryPasswordTable>;

export async function insertRegistryPassword(db: Db, row: RegistryPasswordRow): Promise<void> {
  await db.insertInto("registry_passwords").values(row).execute();
}

export function registryPasswordById(db: Db, id: string): Promise<RegistryPasswordRow | undefined> {
  return db.selectFrom("registry_passwords").selectAll().where("id", "=", id).executeTakeFirst();
}

/** The registry passwords of `identityUid` that have not expired at `time`, oldest first. */
export function liveRegistryPasswords(db: Db, identityUid: string, time: number): Promise<RegistryPasswordRow[]> {
  return db
    .selectFrom("registry_passwords")
    .selectAll()
    .where("identity_uid", "=", identityUid)
    .where((eb) => eb.or([eb("expire_time", "is", null), eb("expire_time", ">", time)]))
    .orderBy("create_time")
    .orderBy("id")
    .execute();
}

/** Deletes the registry password `id` of `identityUid`; false when it has none by that id. */
export async function deleteRegistryPassword(db: Db, identityUid: string, id: string): Promise<boolean> {
  const result = await db.deleteFrom("registry_passwords").where("id", "=", id).where("identity_uid", "=", identityUid).executeTakeFirst();
  return Number(result.numDeletedRows) === 1;
}

/** Forgets the registry passwords of `identityUid` that expired before `time`. */
export async function pruneRegistryPasswords(db: Db, identityUid: string, time: number): Promise<void> {
  await db.deleteFrom("registry_passwords").where("identity_uid", "=", identityUid).where("expire_time", "<=", time).execute();
}

export async function markRegistryPasswordUsed(db: Db, id: string, time: number): Promise<void> {
  await db.updateTable("registry_passwords").set({ last_used_time: time }).where("id", "=", id).execute();
}
