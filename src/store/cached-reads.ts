import { sql, type CompiledQuery, type QueryResult } from "kysely";

/**
 * The store's cached reads, whatever the dialect: a read marked CACHEABLE may be answered from a
 * result the driver cached until the database changed (SQLite: `StatementCache`, by the file's
 * `data_version`; PostgreSQL: `PgCachedReads`, by the server's WAL position), and values derived
 * from such a result's rows (an encoded page, say) are cached with it. Callers use only this
 * module; `cachedDerivation` and friends compute every time when nothing was cached.
 */

/**
 * Ends the SQL of a read whose result the driver may cache until the database changes (a comment
 * to the database).
 */
export const CACHEABLE_READ = "/* cacheable */";

/** `query.modifyEnd(CACHEABLE)` marks a read CACHEABLE_READ. */
export const CACHEABLE = sql.raw(CACHEABLE_READ);

/** A CACHEABLE_READ result cached by `StatementCache`, with the values derived from its rows (`cachedDerivation`). */
export interface CachedResult {
  version: string;
  result: QueryResult<unknown>;
  /** Derived values by name, with the time each was computed (ms); at most MAX_DERIVED. */
  derived: Map<DerivationName, { value: unknown; at: number }>;
}

/**
 * The results of CACHEABLE reads by query (SQL and parameters), each with the database version it
 * was read at, the `capacity` most recently read from the database (an answer from a cached result
 * does not renew it): what each dialect's driver caches (SQLite's
 * `StatementCache`, `PgCachedReads`); the driver says what a version is.
 */
export class CachedResults {
  private readonly results = new Map<string, CachedResult>();
  /** A number per SQL text seen: a key holds the number instead of the text (docs/performance.md). */
  private readonly sqlNumbers = new Map<string, number>();

  constructor(private readonly capacity = 500) {}

  /** The key of `query`'s results: its SQL and parameters. */
  keyOf(query: CompiledQuery): string {
    let number = this.sqlNumbers.get(query.sql);
    if (number === undefined) {
      // SQL texts are as many as query shapes, but for lists bound one parameter each: bounded all the same.
      if (this.sqlNumbers.size >= this.capacity * 4) {
        this.sqlNumbers.clear();
        this.results.clear();
      }
      number = this.sqlNumbers.size;
      this.sqlNumbers.set(query.sql, number);
    }
    return `${number}\u0000${JSON.stringify(query.parameters)}`;
  }

  /** The result cached under `key` if it was read at `version`. */
  at(key: string, version: string): CachedResult | undefined {
    const hit = this.results.get(key);
    return hit?.version === version ? hit : undefined;
  }

  /** Caches `result`, read at `version`, under `key` (beyond `capacity`, the one read from the database longest ago goes). */
  put(key: string, version: string, result: QueryResult<unknown>): CachedResult {
    const hit: CachedResult = { version, result, derived: new Map() };
    this.results.delete(key);
    if (this.results.size >= this.capacity) this.results.delete(this.results.keys().next().value!);
    this.results.set(key, hit);
    return hit;
  }
}

/** An answer from cached result `hit`: copies of its rows (a caller may change them), marked as answered from it (`CACHED`). */
export function answerFromCache(hit: CachedResult): QueryResult<unknown> {
  const rows = hit.result.rows.map((row) => ({ ...(row as object) }));
  Object.defineProperty(rows, CACHED, { value: hit });
  return { rows };
}

/**
 * What tells apart the values derived from one cached result: a string, or the module-level
 * function that derives the value (a mapper), so two mappers of one row never share a value.
 */
export type DerivationName = string | ((...args: never[]) => unknown);

/** Derived values cached with one result at most: more (names made per call, say) start the map afresh. */
const MAX_DERIVED = 64;

/** The cached result an answer's rows were copied from (a non-enumerable property of the rows array, or of a row marked by `cachedWith`). */
export const CACHED = Symbol("cached result");

/**
 * `compute()`, a value that depends on nothing but the rows a CACHEABLE_READ returned (an encoded
 * body, say), cached with the driver's cached result those rows were copied from: while the database
 * has not changed, later reads of the same query answer the same rows and the same value, without
 * computing it again. `name` tells apart the values derived from one result. For rows that were
 * not answered from a cached result (PostgreSQL, a read not marked), computes every time.
 */
export function cachedDerivation<T>(rows: object, name: DerivationName, compute: () => T): T {
  const hit = cachedValue<T>(rows, name);
  return hit !== undefined ? hit : cacheValue(rows, name, compute());
}

/**
 * The value cached as `name` with the cached result `rows` were copied from (`cacheValue`), if any and
 * if cached at most `maxAgeMs` ago (for values that also depend on the time, such as a page token
 * that carries its issue time).
 */
export function cachedValue<T>(rows: object, name: DerivationName, maxAgeMs = Infinity): T | undefined {
  const hit = (rows as { [CACHED]?: CachedResult })[CACHED]?.derived.get(name);
  if (hit === undefined || (maxAgeMs !== Infinity && Date.now() - hit.at > maxAgeMs)) return undefined;
  return hit.value as T;
}

/**
 * Caches `value`, derived from nothing but `rows` (and the time), as `name` with the cached result
 * `rows` were copied from; for rows not answered from a cached result, caches nothing. Returns `value`.
 */
export function cacheValue<T>(rows: object, name: DerivationName, value: T): T {
  const derived = (rows as { [CACHED]?: CachedResult })[CACHED]?.derived;
  if (derived === undefined) return value;
  if (derived.size >= MAX_DERIVED && !derived.has(name)) derived.clear();
  derived.set(name, { value, at: Date.now() });
  return value;
}

/** Whether `rows` were answered from a cached result (so values derived from them can be cached too). */
export function isCached(rows: object): boolean {
  return (rows as { [CACHED]?: CachedResult })[CACHED] !== undefined;
}

/**
 * `derived`, rows (or a row) built from `source` and from reads made after it (a listing's page of
 * keys, then those keys' rows; the one row of a read by key), marked as answered from `source`'s
 * cached result, so values derived from them are cached with it. Exact: a cached
 * result is answered again only while the database has not changed since it was read, and then
 * the later reads answer the same rows too (were the database changed between the reads,
 * `source`'s result is already stale and never answered again). For `source` rows not answered
 * from a cached result, marks nothing. An array is marked itself; an object (a row) is copied and the
 * copy marked: use the value returned.
 */
export function cachedWith<T extends object>(derived: T, source: readonly unknown[]): T {
  const hit = (source as { [CACHED]?: CachedResult })[CACHED];
  if (hit === undefined) return derived;
  // A row is marked on a copy made by Object.assign (docs/performance.md).
  const marked = Array.isArray(derived) ? derived : (Object.assign({}, derived) as T);
  Object.defineProperty(marked, CACHED, { value: hit });
  return marked;
}
