import { createQueryId, type Compilable, type CompiledQuery, type QueryResult } from "kysely";

/** What `runPrecompiled` uses of a Kysely instance or transaction. */
interface Runner {
  getExecutor(): { readonly adapter: object };
  executeQuery<R>(query: CompiledQuery<R>): Promise<QueryResult<R>>;
}

/** A query shape compiled once: its compiled form and, per compiled parameter, the call argument it takes (or none: a constant). */
interface Shape {
  compiled: CompiledQuery<unknown>;
  slots: Array<number | undefined>;
}

/**
 * Runs a compiled query outside any transaction, and answers its result (or a promise of it); or
 * answers undefined (or a promise of it), having run nothing, when it cannot (the query then goes
 * through Kysely).
 */
export type ImmediateRunner = (query: CompiledQuery) => QueryResult<unknown> | Promise<QueryResult<unknown> | undefined> | undefined;

/** Told of each statement an `ImmediateRunner` ran outside Kysely's executor: its duration, or its error (observed as Kysely observes the queries it runs). */
export type StatementObserver = (query: CompiledQuery, durationMs: number, error?: unknown) => void;

/** Immediate runners by Kysely instance (not its transactions: those go through Kysely). */
const immediateRunners = new WeakMap<object, ImmediateRunner>();

/** Lets `runPrecompiled` run queries of `db` itself (not of its transactions) with `runner` (the SQLite dialect's `runNow`, PostgreSQL's `runCached`). */
export function runImmediately(db: object, runner: ImmediateRunner): void {
  immediateRunners.set(db, runner);
}

/** Compiled shapes by dialect adapter (a Kysely instance and its transactions share one), then by shape name. */
const shapes = new WeakMap<object, Map<string, Shape>>();

const placeholder = (i: number) => `\u0000precompiled argument ${i}\u0000`;

/**
 * Runs the query `build` makes, compiled by Kysely once per dialect and `shape` (a name unique to
 * the query's SQL apart from `args`), with `args` bound as its parameters: the same rows as
 * `build(...args).execute()`, without building and compiling the query on every call. `build`
 * gets a placeholder for each argument and must use each as a bound value, exactly once, in a
 * query whose SQL does not depend on the arguments (no lists, no optional clauses); it throws
 * otherwise, at the first call. Run on the store's Kysely instance, it runs at once where the
 * dialect can (`runImmediately`).
 */
export async function runPrecompiled<R>(db: Runner, shape: string, args: readonly unknown[], build: (...placeholders: string[]) => Compilable<R>): Promise<R[]> {
  const adapter = db.getExecutor().adapter;
  let byName = shapes.get(adapter);
  if (byName === undefined) shapes.set(adapter, (byName = new Map()));
  let compiled = byName.get(shape);
  if (compiled === undefined) {
    compiled = compile(shape, args.length, build as (...placeholders: string[]) => Compilable<unknown>);
    byName.set(shape, compiled);
  }
  const { slots } = compiled;
  const parameters = compiled.compiled.parameters.map((value, i) => (slots[i] === undefined ? value : args[slots[i]]));
  // Named fields, not a spread with overrides (docs/performance.md).
  const query: CompiledQuery<R> = { query: compiled.compiled.query, sql: compiled.compiled.sql, parameters, queryId: createQueryId() };
  let now = immediateRunners.get(db)?.(query);
  if (now instanceof Promise) now = await now;
  return ((now as QueryResult<R> | undefined) ?? (await db.executeQuery<R>(query))).rows;
}

function compile(shape: string, count: number, build: (...placeholders: string[]) => Compilable<unknown>): Shape {
  const placeholders = Array.from({ length: count }, (_, i) => placeholder(i));
  const compiled = build(...placeholders).compile();
  const slots = compiled.parameters.map((value) => {
    const at = placeholders.indexOf(value as string);
    return at < 0 ? undefined : at;
  });
  for (let i = 0; i < count; i++) {
    if (slots.filter((slot) => slot === i).length !== 1 || compiled.sql.includes(placeholders[i])) {
      throw new Error(`precompiled query ${shape}: argument ${i} is not bound exactly once as a parameter`);
    }
  }
  return { compiled, slots };
}
