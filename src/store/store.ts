import { Migrator, sql, type Kysely, type Migration } from "kysely";
import { dialectOfDb, openDatabase, type DatabaseOptions, type DialectName, type PoolStats, type QueryObserver } from "./dialect.js";
import type { SystemTables } from "./tables.js";

/** Migrations by name; names sort in the order they run, and a shipped one is never edited. */
export type Migrations = Record<string, Migration>;

/** An open database of tables `DB`, its schema up to date. */
export interface Store<DB> {
  db: Kysely<DB>;
  dialect: DialectName;
  description: string;
  /** Tells `observer` the operation, duration and outcome of every query from now on (metrics). */
  observeQueries(observer: QueryObserver): void;
  /** The connection pool's figures now (PostgreSQL); undefined on SQLite, which has one connection. */
  poolStats?: () => PoolStats;
  /** Waits for queries in flight, then closes the connection(s). */
  close(): Promise<void>;
}

/** Opens the database at `url` and runs `migrations` that it has not run yet. */
export async function openStore<DB>(url: string, migrations: Migrations, options: DatabaseOptions = {}): Promise<Store<DB>> {
  const { db, dialect, description, observeQueries, poolStats } = openDatabase<DB>(url, options);
  try {
    await migrate(db, migrations);
  } catch (error) {
    await db.destroy();
    throw error;
  }
  return { db, dialect, description, observeQueries, poolStats, close: () => db.destroy() };
}

/**
 * The PostgreSQL advisory lock every process takes around its migrations. Kysely's migrator
 * introspects every schema of the database before it locks, and that introspection fails on a
 * table another process is altering at the same moment (replicas starting together, test suites
 * in parallel schemas); one lock for the database makes migrations run one process at a time.
 */
export const MIGRATION_LOCK_KEY = 7_270_112_026;

/**
 * Runs every pending migration of `migrations` (or up to `to`, for tests of older installs); throws
 * the first failure, having changed nothing. All of it is one transaction on one connection, so one
 * process migrates at a time and a failure rolls back whole: on PostgreSQL under the
 * transaction-level lock `MIGRATION_LOCK_KEY` (Kysely's own session lock is then taken and
 * released inside the same transaction, so a pooler in transaction mode, which may hand each
 * transaction another server connection, sees no session state); on SQLite from `BEGIN IMMEDIATE`
 * (Kysely runs SQLite migrations with neither a lock nor a transaction, so two processes opening
 * one new file would both create its tables).
 */
export async function migrate<DB>(db: Kysely<DB>, migrations: Migrations, to?: string): Promise<void> {
  const postgres = dialectOfDb(db) === "postgres";
  await db.connection().execute(async (conn) => {
    await sql.raw(postgres ? "begin" : "begin immediate").execute(conn);
    try {
      let schema: string | undefined;
      if (postgres) {
        await sql`select pg_advisory_xact_lock(${sql.lit(MIGRATION_LOCK_KEY)})`.execute(conn);
        // The migration tables live in the schema the connection works in (its search_path).
        schema = (await sql<{ schema: string }>`select current_schema() as schema`.execute(conn)).rows[0].schema;
      }
      await runMigrations(conn, migrations, schema, to);
    } catch (error) {
      await sql`rollback`.execute(conn);
      throw error;
    }
    await sql`commit`.execute(conn);
  });
}

async function runMigrations<DB>(db: Kysely<DB>, migrations: Migrations, schema: string | undefined, to: string | undefined): Promise<void> {
  const migrator = new Migrator({ db, provider: { getMigrations: async () => migrations }, migrationTableSchema: schema, disableTransactions: true });
  const { error } = to === undefined ? await migrator.migrateToLatest() : await migrator.migrateTo(to);
  if (error) throw error;
}

/** Whether the store answers a query: the readiness the health service reports. */
export async function storeAnswers<DB>(db: Kysely<DB>): Promise<boolean> {
  await (db as unknown as Kysely<SystemTables>).selectFrom("server_secrets").select("name").limit(1).execute();
  return true;
}

/**
 * Whether the store answers and holds every migration of `migrations` (the newest one is
 * recorded): the readiness `/readyz` reports. One primary-key lookup; throws when unreachable.
 */
export async function migrationsApplied<DB>(db: Kysely<DB>, migrations: Migrations): Promise<boolean> {
  const newest = Object.keys(migrations).sort().at(-1)!;
  const row = await sql<{ name: string }>`select name from kysely_migration where name = ${newest}`.execute(db);
  return row.rows.length === 1;
}
