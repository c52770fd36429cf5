import type SqliteDatabase from "better-sqlite3";
import { CompiledQuery, SqliteDialect, SqliteDriver, type DatabaseConnection, type Driver, type QueryResult } from "kysely";

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
 *   SQLITE_BUSY error is thrown; nothing was written.
 */
export class LockWaitingSqliteDialect extends SqliteDialect {
  constructor(
    private readonly database: SqliteDatabase.Database,
    private readonly lockTimeoutMs: number,
  ) {
    super({ database });
  }

  override createDriver(): Driver {
    return new LockWaitingSqliteDriver(this.database, this.lockTimeoutMs);
  }
}

class LockWaitingSqliteDriver extends SqliteDriver {
  private wrapped?: DatabaseConnection;

  constructor(
    private readonly database: SqliteDatabase.Database,
    private readonly lockTimeoutMs: number,
  ) {
    super({ database });
  }

  override async acquireConnection(): Promise<DatabaseConnection> {
    const connection = await super.acquireConnection();
    this.wrapped ??= {
      executeQuery: <R>(query: CompiledQuery) =>
        // Inside a transaction the lock is already held (IMMEDIATE): a busy error there is not retried.
        this.database.inTransaction ? connection.executeQuery<R>(query) : this.waitForLock(() => connection.executeQuery<R>(query)),
      streamQuery: <R>(query: CompiledQuery, chunkSize?: number) => connection.streamQuery<R>(query, chunkSize),
    };
    return this.wrapped;
  }

  override async beginTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw("begin immediate"));
  }

  private async waitForLock<R>(run: () => Promise<QueryResult<R>>): Promise<QueryResult<R>> {
    const deadline = Date.now() + this.lockTimeoutMs;
    for (let pause = 1; ; pause = Math.min(pause * 2, 50)) {
      try {
        return await run();
      } catch (error) {
        if (!isSqliteBusy(error) || Date.now() + pause > deadline) throw error;
      }
      await new Promise((resolve) => setTimeout(resolve, pause));
    }
  }
}
