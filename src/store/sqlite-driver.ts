import type SqliteDatabase from "better-sqlite3";
import { CompiledQuery, SqliteDialect, SqliteDriver, type DatabaseConnection, type Driver, type QueryResult } from "kysely";
import { TransactionAbortedError } from "./errors.js";
import { CACHEABLE_READ, answerFromCache, CachedResults } from "./cached-reads.js";
import { currentSignal } from "./signal.js";
import type { StatementObserver } from "./precompiled.js";
import { TurnReads, type CachedReader } from "./sqlite-turn-reads.js";

/** better-sqlite3 error codes meaning "another connection holds the lock": the statement did nothing. */
const BUSY_CODES = new Set(["SQLITE_BUSY", "SQLITE_BUSY_SNAPSHOT", "SQLITE_BUSY_RECOVERY", "SQLITE_BUSY_TIMEOUT", "SQLITE_LOCKED"]);

export function isSqliteBusy(error: unknown): boolean {
  return BUSY_CODES.has((error as { code?: unknown } | null)?.code as string);
}

/**
 * Kysely's SQLite dialect with two changes:
 * - transactions start with `BEGIN IMMEDIATE`, so a write transaction takes the
 *   write lock before its first statement (a deferred `BEGIN` that later needs
 *   the lock fails at once, whatever the busy timeout);
 * - while another connection (another process on the same file) holds the lock,
 *   `BEGIN IMMEDIATE` and statements outside a transaction are retried for up to
 *   `lockTimeoutMs` without blocking the event loop (better-sqlite3's own
 *   busy_timeout sleeps synchronously, so it is set to 0). After that the
 *   SQLITE_BUSY error is thrown; nothing was written;
 * - statements are prepared once per SQL text and reused (`StatementCache`):
 *   Kysely compiles a query shape to the same text each time.
 */
export class LockWaitingSqliteDialect extends SqliteDialect {
  private driver?: LockWaitingSqliteDriver;
  private turnReads?: TurnReads;

  /** `observe` is told of each statement `runNow` runs (Kysely's log sees the others). */
  constructor(
    private readonly database: SqliteDatabase.Database,
    private readonly lockTimeoutMs: number,
    private readonly observe?: StatementObserver,
  ) {
    super({ database });
  }

  override createDriver(): Driver {
    return (this.driver = new LockWaitingSqliteDriver(this.database, this.lockTimeoutMs));
  }

  /**
   * Runs `query` on the one connection, as a statement outside any transaction (its result exactly
   * what Kysely would answer: the same statement cache and cached reads), or answers undefined
   * without running it: while a transaction is open on the connection (the statement would see its
   * uncommitted rows) or when another connection holds a lock it needs; the caller then goes
   * through Kysely, which waits. A cached read (CACHEABLE_READ) is answered at the end of the event
   * loop's turn with the turn's other cached reads (`TurnReads`); any other statement runs now,
   * synchronously: it cannot interleave with another caller's, so nothing else needs waiting for.
   * Skips Kysely's connection provider and driver frames: a read of one row costs a third less.
   */
  runNow(query: CompiledQuery): QueryResult<unknown> | Promise<QueryResult<unknown> | undefined> | undefined {
    if (this.driver === undefined || this.database.inTransaction) return undefined;
    const statements = this.driver.statementCache();
    if (query.sql.endsWith(CACHEABLE_READ)) {
      this.turnReads ??= new TurnReads(this.database, statements, isSqliteBusy, this.observe);
      return this.turnReads.read(query);
    }
    const start = performance.now();
    try {
      const result = statements.execute(query);
      this.observe?.(query, performance.now() - start);
      return result;
    } catch (error) {
      if (isSqliteBusy(error)) return undefined;
      this.observe?.(query, performance.now() - start, error);
      throw error;
    }
  }
}

class LockWaitingSqliteDriver extends SqliteDriver {
  private wrapped?: DatabaseConnection;
  private statements?: StatementCache;

  constructor(
    private readonly database: SqliteDatabase.Database,
    private readonly lockTimeoutMs: number,
  ) {
    super({ database });
  }

  /** The connection's prepared statements and cached reads. */
  statementCache(): StatementCache {
    return (this.statements ??= new StatementCache(this.database));
  }

  override async acquireConnection(): Promise<DatabaseConnection> {
    const connection = await super.acquireConnection();
    const statements = this.statementCache();
    const execute = <R>(query: CompiledQuery) => Promise.resolve(statements.execute<R>(query));
    this.wrapped ??= {
      executeQuery: <R>(query: CompiledQuery) =>
        // Inside a transaction the lock is already held (IMMEDIATE): a busy error there is not retried.
        this.database.inTransaction ? execute<R>(query) : this.waitForLock(() => execute<R>(query)),
      streamQuery: <R>(query: CompiledQuery, chunkSize?: number) => connection.streamQuery<R>(query, chunkSize),
    };
    return this.wrapped;
  }

  /**
   * `BEGIN IMMEDIATE`, waiting up to `lockTimeoutMs` for a write lock another connection holds.
   * Between two tries the connection is given back, so reads (and writes that find the lock free)
   * run meanwhile instead of queueing behind the wait; the wait ends early, with the store's
   * aborted error, when the transaction's signal (`currentSignal`) aborts.
   */
  override async beginTransaction(_connection: DatabaseConnection): Promise<void> {
    const deadline = Date.now() + this.lockTimeoutMs;
    const signal = currentSignal();
    for (let pause = 1; ; pause = Math.min(pause * 2, 50)) {
      try {
        this.database.exec("begin immediate");
        return;
      } catch (error) {
        if (!isSqliteBusy(error) || Date.now() + pause > deadline) throw error;
      }
      await super.releaseConnection();
      await new Promise((resolve) => setTimeout(resolve, pause));
      await super.acquireConnection();
      if (signal?.aborted) {
        throw new TransactionAbortedError("the call ended while its change waited for the database's write lock; nothing was written");
      }
    }
  }

  /**
   * SQLite ends a transaction itself on some errors (SQLITE_FULL, an I/O error): a ROLLBACK then
   * fails with "no transaction is active" and would replace the error that ended it.
   */
  override async rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    if (this.database.inTransaction) await super.rollbackTransaction(connection);
  }

  /** A statement outside a transaction, retried while the lock is busy, the connection given back between tries (as `beginTransaction`). */
  private async waitForLock<R>(run: () => Promise<QueryResult<R>>): Promise<QueryResult<R>> {
    const deadline = Date.now() + this.lockTimeoutMs;
    for (let pause = 1; ; pause = Math.min(pause * 2, 50)) {
      try {
        return await run();
      } catch (error) {
        if (!isSqliteBusy(error) || Date.now() + pause > deadline) throw error;
      }
      await super.releaseConnection();
      await new Promise((resolve) => setTimeout(resolve, pause));
      await super.acquireConnection();
    }
  }
}

/**
 * better-sqlite3 statements by SQL text, the `capacity` most recently used. Runs a compiled query
 * as Kysely's own SQLite connection does (readers return their rows, others the changes and the
 * last row id), on the cached statement. A statement stays valid across schema changes (SQLite
 * prepares it again when the schema it was compiled for has changed). Only `executeQuery` uses it:
 * a streamed query keeps its own statement busy while it iterates.
 */
export class StatementCache implements CachedReader {
  private readonly statements = new Map<string, SqliteDatabase.Statement>();
  /** Statements this connection ran that may have written (every statement not `readonly`). */
  private writes = 0;
  private dataVersion?: SqliteDatabase.Statement;
  /** Results of queries marked CACHEABLE_READ, by SQL and parameters, with the database version they were read at. */
  private readonly results: CachedResults;

  constructor(
    private readonly database: SqliteDatabase.Database,
    private readonly capacity = 500,
  ) {
    this.results = new CachedResults(capacity);
  }

  execute<R>(query: CompiledQuery): QueryResult<R> {
    const statement = this.prepare(query.sql);
    const parameters = query.parameters as unknown[];
    // A writing statement may also return rows (RETURNING): whether it writes is `readonly`.
    if (!statement.readonly) this.writes++;
    if (statement.reader) {
      if (query.sql.endsWith(CACHEABLE_READ)) return this.readThrough(statement, query, this.version()) as QueryResult<R>;
      return { rows: statement.all(parameters) as R[] };
    }
    const { changes, lastInsertRowid } = statement.run(parameters);
    return { numAffectedRows: BigInt(changes), insertId: BigInt(lastInsertRowid), rows: [] };
  }

  /**
   * The version a cached result must have been read at to be answered again: SQLite's
   * `data_version` (another connection committed) and this connection's statements that may have
   * written. A result cached at the version asked now is exactly what reading again would return.
   */
  version(): string {
    this.dataVersion ??= this.database.prepare("pragma data_version").pluck();
    return `${this.dataVersion.get() as number}:${this.writes}`;
  }

  /**
   * The rows of a CACHEABLE_READ query, read again only when the database may have changed since
   * (its `version`, asked by the caller at most as long ago as this read may be answered from).
   * Each answer holds copies of the rows, so a caller changing its rows changes nothing cached.
   */
  cachedRead(query: CompiledQuery, version: string): QueryResult<unknown> {
    return this.readThrough(this.prepare(query.sql), query, version);
  }

  private readThrough(statement: SqliteDatabase.Statement, query: CompiledQuery, version: string): QueryResult<unknown> {
    const key = this.results.keyOf(query);
    return answerFromCache(this.results.at(key, version) ?? this.results.put(key, version, { rows: statement.all(query.parameters as unknown[]) }));
  }

  private prepare(sql: string): SqliteDatabase.Statement {
    let statement = this.statements.get(sql);
    if (statement) {
      // Most recently used last: Map keeps insertion order.
      this.statements.delete(sql);
    } else {
      statement = this.database.prepare(sql);
      if (this.statements.size >= this.capacity) this.statements.delete(this.statements.keys().next().value!);
    }
    this.statements.set(sql, statement);
    return statement;
  }
}
