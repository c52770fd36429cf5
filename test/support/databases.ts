import { randomBytes } from "node:crypto";
import pg from "pg";
import { MIGRATION_LOCK_KEY } from "../../src/store/store.js";

/**
 * The backends every store test runs against. `TEST_DIALECTS=sqlite` (or
 * `postgres`) narrows the set; PostgreSQL comes from `TEST_POSTGRES_URL`
 * (default the local CI database) and is skipped, with the reason, when unreachable.
 */
export const POSTGRES_URL = process.env.TEST_POSTGRES_URL ?? "postgres://postgres@127.0.0.1:5432/test";

export interface TestDatabase {
  name: "sqlite" | "postgres";
  /** A reason to skip, or undefined. */
  skip?: string;
  /** A fresh, empty database URL (a new schema on PostgreSQL). */
  fresh(): Promise<string>;
}

let postgresProbe: Promise<string | undefined> | undefined;

async function probePostgres(): Promise<string | undefined> {
  const client = new pg.Client({ connectionString: POSTGRES_URL, connectionTimeoutMillis: 2000 });
  try {
    await client.connect();
    await client.query("select 1");
    return undefined;
  } catch (error) {
    return `PostgreSQL at ${POSTGRES_URL} is unreachable (${(error as Error).message}); set TEST_POSTGRES_URL`;
  } finally {
    await client.end().catch(() => {});
  }
}

async function freshPostgres(): Promise<string> {
  const schema = `t_${randomBytes(6).toString("hex")}`;
  const client = new pg.Client({ connectionString: POSTGRES_URL });
  await client.connect();
  await client.query(`create schema ${schema}`);
  await client.end();
  const url = new URL(POSTGRES_URL);
  url.searchParams.set("options", `-c search_path=${schema}`);
  return url.toString();
}

/** Drops the schema a `fresh()` PostgreSQL URL points at; no-op for SQLite. */
export async function dropFresh(url: string): Promise<void> {
  const schema = /search_path%3D(t_[0-9a-f]+)|search_path=(t_[0-9a-f]+)/.exec(url);
  const name = schema?.[1] ?? schema?.[2];
  if (!name) return;
  const client = new pg.Client({ connectionString: POSTGRES_URL });
  await client.connect();
  // Under the migration lock: another process's migrator introspects every schema, and fails on a table dropped meanwhile.
  await client.query(`select pg_advisory_lock(${MIGRATION_LOCK_KEY})`);
  await client.query(`drop schema if exists ${name} cascade`);
  await client.query(`select pg_advisory_unlock(${MIGRATION_LOCK_KEY})`);
  await client.end();
}

export async function testDatabases(): Promise<TestDatabase[]> {
  const wanted = (process.env.TEST_DIALECTS ?? "sqlite,postgres").split(",");
  postgresProbe ??= probePostgres();
  const pgSkip = await postgresProbe;
  const all: TestDatabase[] = [
    { name: "sqlite", fresh: async () => ":memory:" },
    { name: "postgres", skip: pgSkip, fresh: freshPostgres },
  ];
  return all.filter((d) => wanted.includes(d.name));
}
