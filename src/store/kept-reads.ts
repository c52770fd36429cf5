import { sql, type CompiledQuery, type QueryResult } from "kysely";

/**
 * The store's kept reads, whatever the dialect: a read marked KEEPABLE may be answered from a
 * result the driver kept until the database changed (SQLite: `StatementCache`, by the file's
 * `data_version`; PostgreSQL: `PgKeptReads`, by the server's WAL position), and values derived
 * from such a result's rows (an encoded page, say) are kept with it. Callers use only this
 * module; `keptDerivation` and friends compute every time when nothing was kept.
 */

/**
 * Ends the SQL of a read whose result the driver may keep until the database changes (a comment
 * to the database).
 */
export const KEEPABLE_READ = "/* keepable */";

/** `query.modifyEnd(KEEPABLE)` marks a read KEEPABLE_READ. */
export const KEEPABLE = sql.raw(KEEPABLE_READ);

/** A KEEPABLE_READ result kept by `StatementCache`, with the values derived from its rows (`keptDerivation`). */
export interface KeptResult {
  version: string;
  result: QueryResult<unknown>;
  /** Derived values by name, with the time each was computed (ms); at most MAX_DERIVED. */
  derived: Map<DerivationName, { value: unknown; at: number }>;
}

/**
 * The results of KEEPABLE reads by query (SQL and parameters), each with the database version it
 * was read at, the `capacity` most recently read from the database (an answer from a kept result
 * does not renew it): what each dialect's driver keeps (SQLite's
 * `StatementCache`, `PgKeptReads`); the driver says what a version is.
 */
export class KeptResults {
  private readonly results = new Map<string, KeptResult>();
  /**
   * A number per SQL text seen, so a key holds the number instead of the text: a compiled query
   * reuses its SQL string, whose hash V8 keeps, while a key made afresh is hashed on every read.
   */
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

  /** The result kept under `key` if it was read at `version`. */
  at(key: string, version: string): KeptResult | undefined {
    const hit = this.results.get(key);
    return hit?.version === version ? hit : undefined;
  }

  /** Keeps `result`, read at `version`, under `key` (beyond `capacity`, the one read from the database longest ago goes). */
  keep(key: string, version: string, result: QueryResult<unknown>): KeptResult {
    const hit: KeptResult = { version, result, derived: new Map() };
    this.results.delete(key);
    if (this.results.size >= this.capacity) this.results.delete(this.results.keys().next().value!);
    this.results.set(key, hit);
    return hit;
  }
}

/** An answer from kept result `hit`: copies of its rows (a caller may change them), marked as answered from it (`KEPT`). */
export function keptAnswer(hit: KeptResult): QueryResult<unknown> {
  const rows = hit.result.rows.map((row) => ({ ...(row as object) }));
  Object.defineProperty(rows, KEPT, { value: hit });
  return { rows };
}

/**
 * What tells apart the values derived from one kept result: a string, or the module-level
 * function that derives the value (a mapper), so two mappers of one row never share a value.
 */
export type DerivationName = string | ((...args: never[]) => unknown);

/** Derived values kept with one result at most: more (names made per call, say) start the map afresh. */
const MAX_DERIVED = 64;

/** The kept result an answer's rows were copied from (a non-enumerable property of the rows array, or of a row marked by `keptWith`). */
export const KEPT = Symbol("kept result");

/**
 * `compute()`, a value that depends on nothing but the rows a KEEPABLE_READ returned (an encoded
 * body, say), kept with the driver's kept result those rows were copied from: while the database
 * has not changed, later reads of the same query answer the same rows and the same value, without
 * computing it again. `name` tells apart the values derived from one result. For rows that were
 * not answered from a kept result (PostgreSQL, a read not marked), computes every time.
 */
export function keptDerivation<T>(rows: object, name: DerivationName, compute: () => T): T {
  const hit = keptValue<T>(rows, name);
  return hit !== undefined ? hit : keepValue(rows, name, compute());
}

/**
 * The value kept as `name` with the kept result `rows` were copied from (`keepValue`), if any and
 * if kept at most `maxAgeMs` ago (for values that also depend on the time, such as a page token
 * that carries its issue time).
 */
export function keptValue<T>(rows: object, name: DerivationName, maxAgeMs = Infinity): T | undefined {
  const hit = (rows as { [KEPT]?: KeptResult })[KEPT]?.derived.get(name);
  if (hit === undefined || (maxAgeMs !== Infinity && Date.now() - hit.at > maxAgeMs)) return undefined;
  return hit.value as T;
}

/**
 * Keeps `value`, derived from nothing but `rows` (and the time), as `name` with the kept result
 * `rows` were copied from; for rows not answered from a kept result, keeps nothing. Returns `value`.
 */
export function keepValue<T>(rows: object, name: DerivationName, value: T): T {
  const derived = (rows as { [KEPT]?: KeptResult })[KEPT]?.derived;
  if (derived === undefined) return value;
  if (derived.size >= MAX_DERIVED && !derived.has(name)) derived.clear();
  derived.set(name, { value, at: Date.now() });
  return value;
}

/** Whether `rows` were answered from a kept result (so values derived from them can be kept too). */
export function isKept(rows: object): boolean {
  return (rows as { [KEPT]?: KeptResult })[KEPT] !== undefined;
}

/**
 * `derived`, rows (or a row) built from `source` and from reads made after it (a listing's page of
 * keys, then those keys' rows; the one row of a read by key), marked as answered from `source`'s
 * kept result, so values derived from them are kept with it. Exact: a kept
 * result is answered again only while the database has not changed since it was read, and then
 * the later reads answer the same rows too (were the database changed between the reads,
 * `source`'s result is already stale and never answered again). For `source` rows not answered
 * from a kept result, marks nothing. An array is marked itself; an object (a row) is copied and the
 * copy marked: use the value returned.
 */
export function keptWith<T extends object>(derived: T, source: readonly unknown[]): T {
  const hit = (source as { [KEPT]?: KeptResult })[KEPT];
  if (hit === undefined) return derived;
  // A row copied by spread (as `keptAnswer` copies) takes a new property slowly (about 0.9 us in
  // V8); a copy made by Object.assign takes it in a third of that. So a row is marked on a copy.
  const marked = Array.isArray(derived) ? derived : (Object.assign({}, derived) as T);
  Object.defineProperty(marked, KEPT, { value: hit });
  return marked;
}
