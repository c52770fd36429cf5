import { Migrator, sql, type Kysely } from "kysely";
import { dialectOfDb, openDatabase, type DatabaseOptions, type DialectName } from "./dialect.js";
import { MIGRATIONS } from "../domains/index.js";
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

/** Runs every pending migration of every domain; throws the first failure. */
export async function migrate(db: Kysely<Database>): Promise<void> {
  // On PostgreSQL the migration tables live in the schema the connection works in (its search_path).
  const schema =
    dialectOfDb(db) === "postgres"
      ? (await sql<{ schema: string }>`select current_schema() as schema`.execute(db)).rows[0].schema
      : undefined;
  const migrator = new Migrator({ db, provider: { getMigrations: async () => MIGRATIONS }, migrationTableSchema: schema });
  const { error } = await migrator.migrateToLatest();
  if (error) throw error;
}

/** Whether the store answers a query: the readiness the health service reports. */
export async function storeAnswers(db: Kysely<Database>): Promise<boolean> {
  await db.selectFrom("server_secrets").select("name").limit(1).execute();
  return true;
}
