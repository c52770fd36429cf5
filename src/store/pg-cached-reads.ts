import type { CompiledQuery, DatabaseConnection, QueryResult } from "kysely";
import { CACHEABLE_READ, answerFromCache, CachedResults } from "./cached-reads.js";

/** What the cached reads need of the connection pool: one-statement queries. */
interface Queryable {
  query(sql: string): Promise<{ rows: Array<Record<string, unknown>> }>;
}

/**
 * SQLSTATEs after which the clock is not read again: the function is missing or not allowed, or
 * the server is a standby (no WAL of its own is inserted there).
 */
const CLOCK_UNAVAILABLE = new Set(["42883", "42501", "55000"]);

/**
 * PostgreSQL's cached reads: the results of CACHEABLE reads, answered again while no transaction has
 * committed anywhere on the server since they were read, which is exact across replicas.
 *
 * The clock is the server's WAL insert position (`pg_current_wal_insert_lsn()`): a commit inserts
 * its commit record before it becomes visible, so an unchanged position means no commit. A read
 * takes the position from a query sent after the read was asked for (never from one already in
 * flight), then reads the rows; a later read whose own position is the same gets those rows, since
 * nothing committed between the first position and its own (rows read meanwhile would have moved
 * it). The reads asked in one turn of the event loop share one position query (`coalesced`), so
 * under load the clock costs a fraction of a round trip per read. Any other WAL (vacuum, other
 * databases) only makes reads miss. Tables must be logged (ours are): a transaction that wrote
 * only unlogged tables may commit without a commit record.
 */
export class PgCachedReads {
  private readonly results: CachedResults;
  private readonly clock: () => Promise<string | undefined>;
  private disabled = false;
  /** Reads of the current window, and how many were answered from a cached result. */
  private window = { reads: 0, hits: 0 };
  /** Reads left to run without the clock. */
  private skipping = 0;

  constructor(pool: Queryable, capacity?: number) {
    this.results = new CachedResults(capacity);
    this.clock = coalesced(async () => {
      if (this.disabled) return undefined;
      try {
        const { rows } = await pool.query("select pg_current_wal_insert_lsn()::text as lsn");
        return String(rows[0].lsn);
      } catch (error) {
        if (CLOCK_UNAVAILABLE.has((error as { code?: string }).code ?? "")) this.disabled = true;
        return undefined;
      }
    });
  }

  /**
   * Where writes keep moving the position (every replica's), a read would pay the clock and miss
   * anyway: after a window of WINDOW reads of which fewer than MIN_HIT_RATE were answered from the cache, the next
   * SKIPPED reads go to the database directly (as exact), then a window measures again.
   */
  private count(hit: boolean): void {
    this.window.reads++;
    if (hit) this.window.hits++;
    if (this.window.reads < WINDOW) return;
    if (this.window.hits < WINDOW * MIN_HIT_RATE) this.skipping = SKIPPED;
    this.window = { reads: 0, hits: 0 };
  }

  /** The rows of CACHEABLE `query` (copies: a caller may change them), read by `run` unless cached at the current position. */
  async read(query: CompiledQuery, run: () => Promise<QueryResult<unknown>>): Promise<QueryResult<unknown>> {
    if (this.skipping > 0) {
      this.skipping--;
      return run();
    }
    const version = await this.clock();
    if (version === undefined) return run();
    const key = this.results.keyOf(query);
    const hit = this.results.at(key, version);
    this.count(hit !== undefined);
    return answerFromCache(hit ?? this.results.put(key, version, await run()));
  }
}

/** Reads per window of the hit rate. */
const WINDOW = 256;
/** Below this share of cached answers in a window, the next SKIPPED reads run without the clock. */
const MIN_HIT_RATE = 0.5;
const SKIPPED = 1024;

/**
 * `read` shared by concurrent callers, each answered by a read sent after it called: the read is
 * sent at the check phase of the event loop's turn (`setImmediate`), so every caller of the turn
 * shares it; a caller that finds one in flight (sent before it called) waits for the next, sent
 * at the first check phase after that one ends.
 */
export function coalesced<T>(read: () => Promise<T>): () => Promise<T> {
  let inFlight: Promise<T> | undefined;
  let next: Promise<T> | undefined;
  const send = (): Promise<T> => {
    next = undefined;
    const sent = read();
    inFlight = sent;
    const clear = () => {
      if (inFlight === sent) inFlight = undefined;
    };
    sent.then(clear, clear);
    return sent;
  };
  const atCheckPhase = () => new Promise<void>((resolve) => setImmediate(resolve));
  return () =>
    (next ??= (inFlight === undefined ? atCheckPhase() : inFlight.then(atCheckPhase, atCheckPhase)).then(send));
}

/**
 * A connection of the pool taken only when a statement needs one: a CACHEABLE read that is the
 * first statement of the checkout (a read outside any transaction: Kysely runs each query of the
 * root instance on a checkout of its own) is answered through `cache`, without a connection when it
 * is cached. Any other statement (a transaction's `begin` first of all) takes the connection, and
 * every later statement of the checkout runs on it.
 */
export class LazyPgConnection implements DatabaseConnection {
  private real?: DatabaseConnection;
  private taking?: Promise<DatabaseConnection>;

  constructor(
    private readonly acquire: () => Promise<DatabaseConnection>,
    private readonly cache: PgCachedReads,
  ) {}

  /** The pool's connection, if a statement took one (the driver releases it). */
  get taken(): DatabaseConnection | undefined {
    return this.real;
  }

  private connection(): Promise<DatabaseConnection> {
    return (this.taking ??= this.acquire().then((connection) => (this.real = connection)));
  }

  async executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    if (this.real === undefined && query.sql.endsWith(CACHEABLE_READ)) {
      return (await this.cache.read(query, async () => (await this.connection()).executeQuery(query))) as QueryResult<R>;
    }
    return (await this.connection()).executeQuery<R>(query);
  }

  async *streamQuery<R>(query: CompiledQuery, chunkSize?: number): AsyncIterableIterator<QueryResult<R>> {
    yield* (await this.connection()).streamQuery<R>(query, chunkSize);
  }
}
