import { mkdirSync } from "node:fs";
import { dirname } from "node:path";
import SqliteDatabase from "better-sqlite3";
import { Kysely, PostgresAdapter, PostgresDialect, SqliteDialect, sql, type RawBuilder } from "kysely";
import pg from "pg";
import type { Database } from "./tables.js";

/** Every difference between SQLite and PostgreSQL lives in this file. */
export type DialectName = "sqlite" | "postgres";

export interface OpenedDatabase {
  db: Kysely<Database>;
  dialect: DialectName;
  /** Where it is, with any password removed; for logs. */
  description: string;
}

export function dialectOf(url: string): DialectName {
  return /^postgres(ql)?:\/\//.test(url) ? "postgres" : "sqlite";
}

/**
 * Opens `url`: a `postgres://` URL selects PostgreSQL, anything else is a
 * SQLite file path (created with its folder) or `:memory:`.
 */
export function openDatabase(url: string, options: { poolSize?: number } = {}): OpenedDatabase {
  if (dialectOf(url) === "postgres") {
    const pool = new pg.Pool({
      connectionString: url,
      max: options.poolSize ?? 10,
      // int8 (count(*), bigint times) as JS numbers: our values stay below 2^53.
      types: {
        getTypeParser: ((oid: number, format?: "text" | "binary") =>
          oid === 20 ? (v: string) => Number(v) : pg.types.getTypeParser(oid, format as "text")) as typeof pg.types.getTypeParser,
      },
    });
    const safe = new URL(url);
    safe.password = "";
    return { db: new Kysely<Database>({ dialect: new PostgresDialect({ pool }) }), dialect: "postgres", description: safe.toString() };
  }
  if (url !== ":memory:") mkdirSync(dirname(url), { recursive: true });
  const database = new SqliteDatabase(url);
  database.pragma("journal_mode = WAL");
  database.pragma("synchronous = NORMAL");
  database.pragma("foreign_keys = ON");
  database.pragma("busy_timeout = 5000");
  return { db: new Kysely<Database>({ dialect: new SqliteDialect({ database }) }), dialect: "sqlite", description: url };
}

/** Column type modifier giving byte-order comparison, which uidp prefix ranges need. */
export function binaryCollation(dialect: DialectName): RawBuilder<unknown> {
  return dialect === "postgres" ? sql`collate "C"` : sql`collate binary`;
}

/** True for a unique-constraint violation of either backend. */
export function isUniqueViolation(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return code === "23505" || code === "SQLITE_CONSTRAINT_UNIQUE" || code === "SQLITE_CONSTRAINT_PRIMARYKEY";
}

/** True when the backend could not be reached or is shutting down. */
export function isUnavailable(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return (
    code === "ECONNREFUSED" ||
    code === "57P01" ||
    code === "57P03" ||
    code === "SQLITE_BUSY" ||
    (error instanceof Error && /pool .*(ended|closed)|database connection is not open/i.test(error.message))
  );
}

/** The dialect of an open Kysely instance (migrations receive only the instance). */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export function dialectOfDb(db: Kysely<any>): DialectName {
  return db.getExecutor().adapter instanceof PostgresAdapter ? "postgres" : "sqlite";
}

/** Column type for raw bytes (read back as a Buffer on both). */
export function bytesType(dialect: DialectName): RawBuilder<unknown> {
  return dialect === "postgres" ? sql`bytea` : sql`blob`;
}
