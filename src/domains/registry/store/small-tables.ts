/**
 * Small tables the registry host consults on every pull (upstreams, trust policies), read whole at
 * most once per SMALL_TABLE_MAX_AGE_MS per store, so that a pull where none applies costs no
 * query. A write this process makes to such a table (`smallTableWritten`, called by the writes
 * and again once their transaction ends) makes the next read go to the store; another replica's
 * write is seen within SMALL_TABLE_MAX_AGE_MS (docs/decisions.md, "Pulls read small tables from
 * a snapshot").
 */

export const SMALL_TABLE_MAX_AGE_MS = 1000;

/** Bumped by every write to a small table in this process. */
let generation = 0;

interface Snapshot {
  generation: number;
  at: number;
  rows: Promise<unknown[]>;
}

/** Snapshots by store (the Kysely instance the host was given) and table. */
const snapshots = new WeakMap<object, Map<string, Snapshot>>();

/** Marks every snapshot of every store stale. */
export function smallTableWritten(): void {
  generation++;
}

/** `promise`, with the snapshots marked stale once it settles (a write's transaction ended). */
export function afterSmallTableWrite<T>(promise: Promise<T>): Promise<T> {
  return promise.finally(smallTableWritten);
}

/** The rows `read` gives, from a snapshot of `db`'s `table` at most SMALL_TABLE_MAX_AGE_MS old and taken after this process's last write. */
export function snapshotOf<T>(db: object, table: string, read: () => Promise<T[]>, now = Date.now()): Promise<T[]> {
  let byTable = snapshots.get(db);
  if (byTable === undefined) snapshots.set(db, (byTable = new Map()));
  const held = byTable.get(table);
  if (held !== undefined && held.generation === generation && now - held.at < SMALL_TABLE_MAX_AGE_MS) return held.rows as Promise<T[]>;
  const taken: Snapshot = { generation, at: now, rows: read() };
  byTable.set(table, taken);
  // A failed read is not kept: the next pull reads again.
  taken.rows.catch(() => {
    if (byTable.get(table) === taken) byTable.delete(table);
  });
  return taken.rows as Promise<T[]>;
}
