import { Migrator, sql, type Kysely, type Transaction } from "kysely";
import { deadlineExceeded } from "../api/errors.js";
import { dialectOfDb, openDatabase, type DatabaseOptions, type DialectName } from "./dialect.js";
import { migrations } from "./migrations/index.js";
import type { Database } from "./tables.js";

export interface Store {
  db: Kysely<Database>;
  dialect: DialectName;
  description: string;
  /** Waits for queries in flight, then closes the connection(s). */
  close(): Promise<void>;
}

/** Opens the database at `url` and brings its schema up to date. */
export async function openStore(url: string, options: DatabaseOptions = {}): Promise<Store> {
  const { db, dialect, description } = openDatabase(url, options);
  try {
    await migrate(db);
  } catch (error) {
    await db.destroy();
    throw error;
  }
  return { db, dialect, description, close: () => db.destroy() };
}

/** Runs every pending migration; throws the first failure. */
export async function migrate(db: Kysely<Database>): Promise<void> {
  // On PostgreSQL the migration tables live in the schema the connection works in (its search_path).
  const schema =
    dialectOfDb(db) === "postgres"
      ? (await sql<{ schema: string }>`select current_schema() as schema`.execute(db)).rows[0].schema
      : undefined;
  const migrator = new Migrator({ db, provider: { getMigrations: async () => migrations }, migrationTableSchema: schema });
  const { error } = await migrator.migrateToLatest();
  if (error) throw error;
}

/**
 * Runs `work` in a transaction. When `signal` has aborted by the time `work`
 * finishes (the call's deadline passed or its client left), the transaction
 * rolls back and DEADLINE_EXCEEDED is thrown: nothing unacknowledged is written.
 */
export async function inTransaction<T>(
  db: Kysely<Database>,
  signal: AbortSignal | undefined,
  work: (trx: Transaction<Database>) => Promise<T>,
): Promise<T> {
  return db.transaction().execute(async (trx) => {
    const result = await work(trx);
    if (signal?.aborted) throw deadlineExceeded("the call ended before its change was committed; nothing was written");
    return result;
  });
}
