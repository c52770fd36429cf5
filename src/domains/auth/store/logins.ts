import type { Selectable } from "kysely";
import type { Db } from "../../kit/schema.js";
import type { LoginTable } from "../tables.js";

export type LoginRow = Selectable<LoginTable>;

export async function insertLogin(db: Db, row: LoginRow): Promise<void> {
  await db.insertInto("logins").values(row).execute();
}

/** The live (unexpired) login whose `column` is `value`, if any. */
export function liveLoginBy(db: Db, column: "state_hash" | "code_hash" | "device_code_hash" | "user_code", value: string, now: number): Promise<LoginRow | undefined> {
  return db.selectFrom("logins").selectAll().where(column, "=", value).where("expire_time", ">", now).executeTakeFirst();
}

/**
 * Moves a login from status `from` to the given change; false when it is no longer in `from`
 * (another request took it first: a state, a code or a device grant is used once).
 */
export async function advanceLogin(db: Db, uid: string, from: string, change: Partial<Omit<LoginRow, "uid">>): Promise<boolean> {
  const result = await db.updateTable("logins").set(change).where("uid", "=", uid).where("status", "=", from).executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

export async function setLoginPoll(db: Db, uid: string, lastPollTime: number, pollInterval: number): Promise<void> {
  await db.updateTable("logins").set({ last_poll_time: lastPollTime, poll_interval: pollInterval }).where("uid", "=", uid).execute();
}

/** Forgets logins that expired before `before`. */
export async function pruneLogins(db: Db, before: number): Promise<void> {
  await db.deleteFrom("logins").where("expire_time", "<", before).execute();
}

/** Device logins waiting for their person (started, not yet confirmed) and unexpired at `now`: all, or those of `clientAddress`. */
function pendingDeviceLogins(db: Db, now: number, clientAddress?: string) {
  let query = db.selectFrom("logins").where("expire_time", ">", now).where("kind", "=", "device").where("status", "=", "started");
  if (clientAddress !== undefined) query = query.where("client_address", "=", clientAddress);
  return query;
}

/** How many device logins are pending (`pendingDeviceLogins`), and when the first of them expires (ms; undefined for none). */
export async function pendingDeviceLoginCount(db: Db, now: number, clientAddress?: string): Promise<{ count: number; firstExpiry: number | undefined }> {
  const row = await pendingDeviceLogins(db, now, clientAddress)
    .select((eb) => [eb.fn.countAll<number | string | bigint>().as("count"), eb.fn.min("expire_time").as("first_expiry")])
    .executeTakeFirst();
  const first = row?.first_expiry;
  return { count: Number(row?.count ?? 0), firstExpiry: first === null || first === undefined ? undefined : Number(first) };
}
