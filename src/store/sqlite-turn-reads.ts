import type SqliteDatabase from "better-sqlite3";
import type { CompiledQuery, QueryResult } from "kysely";
import type { StatementObserver } from "./precompiled.js";

/** What `TurnReads` uses of the connection's statement cache (`StatementCache`). */
export interface CachedReader {
  /** The version a cached result must have been read at to be answered again; asks SQLite (`data_version`). */
  version(): string;
  /** A CACHEABLE_READ query's rows: the result cached at `version`, or read now and cached. */
  cachedRead(query: CompiledQuery, version: string): QueryResult<unknown>;
}


interface Waiting {
  query: CompiledQuery;
  resolve: (result: QueryResult<unknown> | undefined) => void;
  reject: (error: unknown) => void;
}

/**
 * Cached reads outside transactions (CACHEABLE_READ), answered together at the check phase of the
 * event loop's turn they were asked in (`setImmediate`), all at one database version: SQLite's
 * `data_version` is asked once per turn instead of once per read (two lock syscalls and a
 * statement, the largest single cost of a read by key answered from a cached result).
 *
 * Exact: a read is answered after the I/O of its turn, so every commit that had completed when
 * the request asking for it was sent (before its bytes could be read) is in the version asked
 * then; a read asked at a check phase waits for the next turn's. What another connection commits
 * while the reads are answered is seen by the next turn's reads, as it would be by reads asked a
 * moment earlier.
 *
 * Answers undefined, having run nothing, for a read that cannot run now: while a transaction is
 * open on the connection (its uncommitted rows), or when another connection holds a lock it needs;
 * the caller then goes through Kysely, which waits.
 */
export class TurnReads {
  private waiting: Waiting[] = [];

  constructor(
    private readonly database: SqliteDatabase.Database,
    private readonly reader: CachedReader,
    private readonly isBusy: (error: unknown) => boolean,
    private readonly observe?: StatementObserver,
  ) {}

  read(query: CompiledQuery): Promise<QueryResult<unknown> | undefined> {
    return new Promise((resolve, reject) => {
      if (this.waiting.push({ query, resolve, reject }) === 1) setImmediate(this.answer);
    });
  }

  private readonly answer = (): void => {
    const waiting = this.waiting;
    this.waiting = [];
    if (this.database.inTransaction) {
      for (const read of waiting) read.resolve(undefined);
      return;
    }
    const reader = this.reader;
    let version: string | undefined;
    for (const read of waiting) {
      const start = performance.now();
      try {
        version ??= reader.version();
        const result = reader.cachedRead(read.query, version);
        this.observe?.(read.query, performance.now() - start);
        read.resolve(result);
      } catch (error) {
        if (this.isBusy(error)) {
          // The version stays unasked: the next read asks again.
          version = undefined;
          read.resolve(undefined);
        } else {
          this.observe?.(read.query, performance.now() - start, error);
          read.reject(error);
        }
      }
    }
  };
}
