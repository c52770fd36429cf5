import type { CompiledQuery, DatabaseConnection, QueryResult } from "kysely";
import { KEEPABLE_READ, KEPT, type KeptResult } from "./kept-reads.js";

/** What the kept reads need of the connection pool: one-statement queries. */
interface Queryable {
  query(sql: string): Promise<{ rows: Array<Record<string, unknown>> }>;
}

/**
 * SQLSTATEs after which the clock is not read again: the function is missing or not allowed, or
 * the server is a standby (no WAL of its own is inserted there).
 */
const CLOCK_UNAVAILABLE = new Set(["42883", "42501", "55000"]);

/**
 * PostgreSQL's kept reads: the results of KEEPABLE reads, answered again while no transaction has
 * committed anywhere on the server since they were read, which is exact across replicas.
 *
 * The clock is the server's WAL insert position (`pg_current_wal_insert_lsn()`): a commit inserts
 * its commit record before it becomes visible, so an unchanged position means no commit. A read
 * takes the position from a query sent after the read was asked for (never from one already in
 * flight), then reads the rows; a later read whose own position is the same gets those rows, since
 * nothing committed between the first position and its own (rows read meanwhile would have moved
 * it). Concurrent reads share one position query (`coalesced`), so under load the clock costs a
 * fraction of a round trip per read. Any other WAL (vacuum, other databases) only makes reads miss.
 * Tables must be logged (ours are): a transaction that wrote only unlogged tables may commit
 * without a commit record.
 */
export class PgKeptReads {
  private readonly results = new Map<string, KeptResult>();
  private readonly clock: () => Promise<string | undefined>;
  private disabled = false;

  constructor(
    pool: Queryable,
    private readonly capacity = 500,
  ) {
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

  /** The rows of KEEPABLE `query` (copies: a caller may change them), read by `run` unless kept at the current position. */
  async read(query: CompiledQuery, run: () => Promise<QueryResult<unknown>>): Promise<QueryResult<unknown>> {
    const version = await this.clock();
    if (version === undefined) return run();
    const key = `${query.sql}\u0000${JSON.stringify(query.parameters)}`;
    let hit = this.results.get(key);
    if (hit?.version !== version) {
      hit = { version, result: await run(), derived: new Map() };
      this.results.delete(key);
      if (this.results.size >= this.capacity) this.results.delete(this.results.keys().next().value!);
      this.results.set(key, hit);
    }
    const rows = hit.result.rows.map((row) => ({ ...(row as object) }));
    Object.defineProperty(rows, KEPT, { value: hit });
    return { ...hit.result, rows };
  }
}

/**
 * `read` shared by concurrent callers, each answered by a read sent after it called: a caller that
 * finds one in flight (sent before it called) waits for the next, which starts when that one ends.
 */
export function coalesced<T>(read: () => Promise<T>): () => Promise<T> {
  let inFlight: Promise<T> | undefined;
  let next: Promise<T> | undefined;
  const start = (): Promise<T> => {
    const started = read();
    inFlight = started;
    const clear = () => {
      if (inFlight === started) inFlight = undefined;
    };
    started.then(clear, clear);
    return started;
  };
  return () => {
    if (inFlight === undefined) return start();
    next ??= inFlight.then(
      () => undefined,
      () => undefined,
    ).then(() => {
      next = undefined;
      return start();
    });
    return next;
  };
}

/**
 * A connection of the pool taken only when a statement needs one: a KEEPABLE read that is the
 * first statement of the checkout (a read outside any transaction: Kysely runs each query of the
 * root instance on a checkout of its own) is answered through `kept`, without a connection when it
 * is kept. Any other statement (a transaction's `begin` first of all) takes the connection, and
 * every later statement of the checkout runs on it.
 */
export class LazyPgConnection implements DatabaseConnection {
  private real?: DatabaseConnection;
  private taking?: Promise<DatabaseConnection>;

  constructor(
    private readonly acquire: () => Promise<DatabaseConnection>,
    private readonly kept: PgKeptReads,
  ) {}

  /** The pool's connection, if a statement took one (the driver releases it). */
  get taken(): DatabaseConnection | undefined {
    return this.real;
  }

  private connection(): Promise<DatabaseConnection> {
    return (this.taking ??= this.acquire().then((connection) => (this.real = connection)));
  }

  async executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    if (this.real === undefined && query.sql.endsWith(KEEPABLE_READ)) {
      return (await this.kept.read(query, async () => (await this.connection()).executeQuery(query))) as QueryResult<R>;
    }
    return (await this.connection()).executeQuery<R>(query);
  }

  async *streamQuery<R>(query: CompiledQuery, chunkSize?: number): AsyncIterableIterator<QueryResult<R>> {
    yield* (await this.connection()).streamQuery<R>(query, chunkSize);
  }
}
