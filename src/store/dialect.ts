import { mkdirSync } from "node:fs";
import { dirname } from "node:path";
import SqliteDatabase from "better-sqlite3";
import {
  CompiledQuery,
  Kysely,
  PostgresAdapter,
  PostgresDialect,
  PostgresDriver,
  sql,
  type DatabaseConnection,
  type Driver,
  type LogEvent,
  type PostgresDialectConfig,
  type QueryResult,
  type RawBuilder,
  type TransactionSettings,
} from "kysely";
import pg from "pg";
import { isSqliteBusy, LockWaitingSqliteDialect } from "./sqlite-driver.js";
import { LazyPgConnection, PgCachedReads } from "./pg-cached-reads.js";
import { CACHEABLE_READ } from "./cached-reads.js";
import { runImmediately, type StatementObserver } from "./precompiled.js";
import { limitTransactions } from "./transaction.js";

/**
 * Which database a URL names, how each is opened and how their errors read; `dialectOfDb` tells
 * any other code which one it runs on. Each dialect's driver lives beside this file (SQLite:
 * `sqlite-driver.ts`, `sqlite-turn-reads.ts`; PostgreSQL: `pg-cached-reads.ts`).
 */
export type DialectName = "sqlite" | "postgres";

export interface OpenedDatabase<DB> {
  db: Kysely<DB>;
  dialect: DialectName;
  /** Where it is, with any password removed; for logs. */
  description: string;
  /** Tells `observer` the operation, duration and outcome of every query from now on. */
  observeQueries(observer: QueryObserver): void;
  /** The connection pool's figures now (PostgreSQL); undefined on SQLite, which has one connection. */
  poolStats?: () => PoolStats;
}

/** `operation`: select, insert, update, delete or raw; `seconds`: from sending the query to its result. */
export type QueryObserver = (operation: string, seconds: number, failed: boolean) => void;

export interface PoolStats {
  /** Connections open, idle ones included. */
  total: number;
  idle: number;
  /** Queries waiting for a connection. */
  waiting: number;
  /** The pool's size. */
  max: number;
}

/** Kysely's query log, feeding the observers (one performance.now() pair per query). */
function queryLog(observers: QueryObserver[]): (event: LogEvent) => void {
  const operations = new Map<string, string>();
  return (event) => {
    if (observers.length === 0) return;
    const kind = event.query.query.kind;
    let operation = operations.get(kind);
    if (operation === undefined) operations.set(kind, (operation = kind.replace(/(Query)?Node$/, "").toLowerCase()));
    for (const observe of observers) observe(operation, event.queryDurationMillis / 1000, event.level === "error");
  };
}

export function dialectOf(url: string): DialectName {
  return /^postgres(ql)?:\/\//.test(url) ? "postgres" : "sqlite";
}

export interface DatabaseOptions {
  /** PostgreSQL connections in the pool. Default 10. */
  poolSize?: number;
  /**
   * How long a write waits for a lock another connection holds, ms (default 5000): on SQLite the
   * write lock (then SQLITE_BUSY), on PostgreSQL any lock a transaction's statement needs (`lock_timeout`).
   */
  lockTimeoutMs?: number;
  /** PostgreSQL: the longest a transaction's statement may run, and a transaction stay idle, ms (default 30000). */
  statementTimeoutMs?: number;
  /**
   * PostgreSQL: told when the server closes an idle pooled connection (a restart, a failover,
   * `idle_session_timeout`, `pg_terminate_backend`, a pooler going away). The pool has already
   * dropped it and opens another when one is needed; the process carries on.
   */
  onConnectionLost?: (error: Error) => void;
}

/**
 * Opens `url`: a `postgres://` URL selects PostgreSQL, anything else is a
 * SQLite file path (created with its folder) or `:memory:`. SQLite write
 * transactions start IMMEDIATE and wait for the lock without blocking the
 * event loop (see `LockWaitingSqliteDialect`).
 */
export function openDatabase<DB>(url: string, options: DatabaseOptions = {}): OpenedDatabase<DB> {
  const observers: QueryObserver[] = [];
  const log = queryLog(observers);
  // Statements the dialects run outside Kysely's executor are observed as Kysely observes the queries it runs.
  const observe: StatementObserver = (query, queryDurationMillis, error) =>
    log(error === undefined ? { level: "query", query, queryDurationMillis } : { level: "error", error, query, queryDurationMillis });
  const observeQueries = (observer: QueryObserver) => void observers.push(observer);
  if (dialectOf(url) === "postgres") {
    const max = options.poolSize ?? 10;
    const pool = new pg.Pool({
      connectionString: url,
      max,
      // int8 (count(*), bigint times) as JS numbers: our values stay below 2^53.
      types: {
        getTypeParser: ((oid: number, format?: "text" | "binary") =>
          oid === 20 ? (v: string) => Number(v) : pg.types.getTypeParser(oid, format as "text")) as typeof pg.types.getTypeParser,
      },
    });
    // A connection the server closes emits `error` on its client (held by a call between two queries)
    // or, when idle, on the pool: unhandled, either would end the process. The pool drops the client.
    pool.on("connect", (client) => client.on("error", (error) => options.onConnectionLost?.(error)));
    pool.on("error", () => {});
    const safe = new URL(url);
    safe.password = "";
    const dialect = new BoundedPostgresDialect({ pool }, options.lockTimeoutMs ?? DEFAULT_LOCK_TIMEOUT_MS, options.statementTimeoutMs ?? DEFAULT_STATEMENT_TIMEOUT_MS, observe);
    const db = new Kysely<DB>({ dialect, log });
    runImmediately(db, (query) => dialect.runCached(query));
    // Transactions may hold all but READ_RESERVE connections: a lock that holds writes up leaves reads a way through.
    limitTransactions(db, Math.max(1, max - READ_RESERVE));
    return {
      db,
      dialect: "postgres",
      description: safe.toString(),
      observeQueries,
      poolStats: () => ({ total: pool.totalCount, idle: pool.idleCount, waiting: pool.waitingCount, max }),
    };
  }
  if (url !== ":memory:") mkdirSync(dirname(url), { recursive: true });
  const database = new SqliteDatabase(url);
  database.pragma("journal_mode = WAL");
  database.pragma("synchronous = NORMAL");
  // A checkpoint truncates the WAL back to this size: without it, a file grown behind a long reader stays that large.
  database.pragma(`journal_size_limit = ${WAL_SIZE_LIMIT}`);
  database.pragma("foreign_keys = ON");
  // Lock waits are the dialect's (asynchronous); SQLite's own would block the event loop.
  database.pragma("busy_timeout = 0");
  const dialect = new LockWaitingSqliteDialect(database, options.lockTimeoutMs ?? DEFAULT_LOCK_TIMEOUT_MS, observe);
  const db = new Kysely<DB>({ dialect, log });
  runImmediately(db, (query) => dialect.runNow(query));
  return { db, dialect: "sqlite", description: url, observeQueries };
}

/** `lockTimeoutMs` unless given (the server passes its `--lock-timeout`). */
const DEFAULT_LOCK_TIMEOUT_MS = 5_000;
/** `statementTimeoutMs` unless given (the server passes its request timeout). */
const DEFAULT_STATEMENT_TIMEOUT_MS = 30_000;

/** SQLite: bytes the write-ahead log is truncated to after a checkpoint. */
export const WAL_SIZE_LIMIT = 64 * 1024 * 1024;

/** PostgreSQL connections kept from transactions for reads outside them. */
const READ_RESERVE = 2;

/**
 * Kysely's PostgreSQL dialect whose transactions begin with their bounds, in the same round trip
 * as `begin` (`SET LOCAL`, so they hold through a pooler in transaction mode): a statement that
 * waits longer than `lockTimeoutMs` for a lock fails (55P03, UNAVAILABLE) instead of holding its
 * connection as long as the lock is held, none runs longer than `statementTimeoutMs`, and a
 * transaction left idle that long is ended by the server.
 */
class BoundedPostgresDialect extends PostgresDialect {
  private readonly begin: string;
  private readonly cache: PgCachedReads;

  constructor(
    private readonly config: PostgresDialectConfig & { pool: pg.Pool },
    lockTimeoutMs: number,
    statementTimeoutMs: number,
    private readonly observe: StatementObserver,
  ) {
    super(config);
    this.cache = new PgCachedReads(config.pool);
    const ms = (n: number) => `'${Math.max(1, Math.round(n))}ms'`;
    this.begin = `begin; set local lock_timeout = ${ms(lockTimeoutMs)}; set local statement_timeout = ${ms(statementTimeoutMs)}; set local idle_in_transaction_session_timeout = ${ms(statementTimeoutMs)}`;
  }

  /**
   * A cached read (CACHEABLE_READ) of the root instance without Kysely's executor and connection
   * checkout: answered from the result cached at the current position, or read on a pooled
   * connection (`pool.query`, as Kysely's connection runs it) and cached. Undefined, having run
   * nothing, for any other statement (it goes through Kysely). Observed as Kysely observes the
   * queries it runs.
   */
  runCached(query: CompiledQuery): Promise<QueryResult<unknown>> | undefined {
    if (!query.sql.endsWith(CACHEABLE_READ)) return undefined;
    const start = performance.now();
    const pool = this.config.pool;
    return this.cache.read(query, async () => ({ rows: (await pool.query(query.sql, query.parameters as unknown[])).rows })).then(
      (result) => {
        this.observe(query, performance.now() - start);
        return result;
      },
      (error: unknown) => {
        this.observe(query, performance.now() - start, error);
        throw error;
      },
    );
  }

  override createDriver(): Driver {
    const begin = this.begin;
    const cache = this.cache;
    return new (class extends PostgresDriver {
      // Checkouts take a pooled connection only for a statement that is not a cached read (`LazyPgConnection`).
      override async acquireConnection(): Promise<DatabaseConnection> {
        return new LazyPgConnection(() => super.acquireConnection(), cache);
      }
      override async releaseConnection(connection: DatabaseConnection): Promise<void> {
        const taken = (connection as LazyPgConnection).taken;
        if (taken !== undefined) await super.releaseConnection(taken as never);
      }
      override async beginTransaction(connection: DatabaseConnection, settings: TransactionSettings): Promise<void> {
        if (settings.isolationLevel || settings.accessMode) return super.beginTransaction(connection, settings);
        await connection.executeQuery(CompiledQuery.raw(begin));
      }
    })(this.config);
  }
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

/**
 * PostgreSQL SQLSTATEs a retry may cure: connection exceptions (class 08), too many
 * connections, shutdown or start-up in progress, lock not available, serialization
 * failure and deadlock.
 */
const PG_RETRYABLE = /^(08...|53300|57P0[123]|55P03|40001|40P01)$/;
const NETWORK_CODES = new Set(["ECONNREFUSED", "ECONNRESET", "ETIMEDOUT", "EPIPE", "ENOTFOUND", "EAI_AGAIN", "EHOSTUNREACH", "ENETUNREACH"]);

/**
 * True when the store failed for a reason outside the request: the backend could
 * not be reached, is shutting down, or another connection held a lock for longer
 * than the wait allows. Such a request did not write anything and may be retried.
 */
export function isUnavailable(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code === "string" && (NETWORK_CODES.has(code) || PG_RETRYABLE.test(code) || isSqliteBusy(error))) return true;
  return (
    error instanceof Error &&
    /pool .*(ended|closed)|database connection is not open|connection terminated|not queryable|timeout exceeded when trying to connect/i.test(error.message)
  );
}

/** Codes of a store that cannot write for want of space: SQLite's full database, PostgreSQL's disk_full, the file system's. */
const FULL_CODES = new Set(["SQLITE_FULL", "53100", "ENOSPC", "EDQUOT"]);

/** True when a write failed because the database's disk (or quota, or size limit) is full: nothing was written. */
export function isStorageFull(error: unknown): boolean {
  return FULL_CODES.has((error as { code?: unknown } | null)?.code as string);
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
