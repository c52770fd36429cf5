import type { Kysely, Selectable, Transaction } from "kysely";
import type { SigningKeyTable, SystemTables } from "./tables.js";

/** The database, or an open transaction, holding the store's own tables (and any others). */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type KeysDb = Kysely<SystemTables> | Transaction<SystemTables> | Kysely<any> | Transaction<any>;
/** The store's own tables, whatever else the database holds. */
const own = (db: KeysDb) => db as Kysely<SystemTables>;

export type SigningKeyRow = Selectable<SigningKeyTable>;

/** Every signing key, newest first. */
export async function listSigningKeys(db: KeysDb): Promise<SigningKeyRow[]> {
  return own(db).selectFrom("signing_keys").selectAll().orderBy("create_time", "desc").orderBy("kid").execute();
}

/** Deletes the keys `kids` (retired by a rotation); returns how many there were. */
export async function deleteSigningKeys(db: KeysDb, kids: string[]): Promise<number> {
  if (kids.length === 0) return 0;
  const result = await own(db).deleteFrom("signing_keys").where("kid", "in", kids).executeTakeFirst();
  return Number(result.numDeletedRows);
}

/** Inserts a key unless one with its kid exists. */
export async function insertSigningKey(db: KeysDb, row: SigningKeyRow): Promise<void> {
  await own(db).insertInto("signing_keys").values(row).onConflict((oc) => oc.column("kid").doNothing()).execute();
}

/**
 * The secret named `name`, created from `generate()` on first use. Replicas
 * racing to create it all end up with the one stored first.
 */
export async function serverSecret(db: KeysDb, name: string, generate: () => string, now: number): Promise<string> {
  await own(db)
    .insertInto("server_secrets")
    .values({ name, value: generate(), create_time: now })
    .onConflict((oc) => oc.column("name").doNothing())
    .execute();
  const row = await own(db).selectFrom("server_secrets").select("value").where("name", "=", name).executeTakeFirstOrThrow();
  return row.value;
}
