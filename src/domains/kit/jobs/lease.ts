import { randomUUID } from "node:crypto";
import { hostname } from "node:os";
import type { Kysely } from "kysely";
import { dialectOfDb } from "../../../store/dialect.js";
import type { Database, Db } from "../schema.js";

/** What a lease is of: a job, and what of it (a feed's URL; "" when the job has one lease). */
export interface LeaseName {
  job: string;
  key?: string;
}

/** A lease as stored: its holder ("" when none) and when it ends (epoch ms). */
export interface LeaseState {
  holder: string;
  until: number;
}

/** A lease holder's name for a job of this process: the host, the process and a random suffix. */
export function leaseHolder(): string {
  return `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
}

const keyOf = (lease: LeaseName) => lease.key ?? "";
const free = (row: LeaseState | undefined, holder: string, now: number) => row === undefined || row.until <= now || row.holder === holder;

async function leaseRow(db: Db, lease: LeaseName): Promise<LeaseState | undefined> {
  const row = await db.selectFrom("job_leases").select(["holder", "lease_until"]).where("job", "=", lease.job).where("key", "=", keyOf(lease)).executeTakeFirst();
  return row && { holder: row.holder, until: Number(row.lease_until) };
}

/** The leases of `job` for `keys` that have a row, by key. */
export async function leasesOf(db: Db, job: string, keys: readonly string[]): Promise<Map<string, LeaseState>> {
  if (keys.length === 0) return new Map();
  const rows = await db.selectFrom("job_leases").select(["key", "holder", "lease_until"]).where("job", "=", job).where("key", "in", keys).execute();
  return new Map(rows.map((row) => [row.key, { holder: row.holder, until: Number(row.lease_until) }]));
}

/**
 * Takes `lease` for `holder` until `now + leaseMs` when nobody else holds it (an expired lease is
 * taken over: its holder died or stalled) and `when` finds the job due, reading the job's own
 * state in the same transaction; returns what `when` returned, or undefined when not taken.
 * Several processes may try at once: the conditional update decides, and on PostgreSQL the row is
 * read `FOR UPDATE SKIP LOCKED` first, so a process that finds it being taken moves on without
 * waiting. A lease that is held or not due is seen without a transaction (on SQLite one would take
 * the write lock on every look).
 */
export async function takeLease<T>(
  db: Kysely<Database>,
  lease: LeaseName,
  holder: string,
  now: number,
  leaseMs: number,
  when: (db: Db) => Promise<T | undefined>,
): Promise<T | undefined> {
  if (!free(await leaseRow(db, lease), holder, now) || (await when(db)) === undefined) return undefined;
  await db.insertInto("job_leases").values({ job: lease.job, key: keyOf(lease), holder: "", lease_until: 0 }).onConflict((oc) => oc.columns(["job", "key"]).doNothing()).execute();
  const postgres = dialectOfDb(db) === "postgres";
  return db.transaction().execute(async (trx) => {
    let query = trx.selectFrom("job_leases").select(["holder", "lease_until"]).where("job", "=", lease.job).where("key", "=", keyOf(lease));
    if (postgres) query = query.forUpdate().skipLocked();
    const row = await query.executeTakeFirst();
    if (!row || !free({ holder: row.holder, until: Number(row.lease_until) }, holder, now)) return undefined;
    const due = await when(trx);
    if (due === undefined) return undefined;
    const result = await trx
      .updateTable("job_leases")
      .set({ holder, lease_until: now + leaseMs })
      .where("job", "=", lease.job)
      .where("key", "=", keyOf(lease))
      .where((eb) => eb.or([eb("lease_until", "<=", now), eb("holder", "=", holder)]))
      .executeTakeFirst();
    return Number(result.numUpdatedRows) === 1 ? due : undefined;
  });
}

/**
 * Extends `holder`'s lease to `until`; false when it no longer holds it (it expired and another
 * took it). In a transaction on PostgreSQL the update locks the row until that transaction ends,
 * so a process taking the lease over waits for it: a write that renews first is fenced.
 */
export async function renewLease(db: Db, lease: LeaseName, holder: string, until: number): Promise<boolean> {
  const result = await db.updateTable("job_leases").set({ lease_until: until }).where("job", "=", lease.job).where("key", "=", keyOf(lease)).where("holder", "=", holder).executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/**
 * Gives `holder`'s lease back and, when it still held it, runs `record` (the job's own state: when
 * it ran, what it found) in the same transaction; false when it no longer held it (nothing written).
 */
export async function releaseLease(db: Db, lease: LeaseName, holder: string, record?: (db: Db) => Promise<void>): Promise<boolean> {
  const release = async (trx: Db) => {
    const result = await trx.updateTable("job_leases").set({ holder: "", lease_until: 0 }).where("job", "=", lease.job).where("key", "=", keyOf(lease)).where("holder", "=", holder).executeTakeFirst();
    if (Number(result.numUpdatedRows) !== 1) return false;
    await record?.(trx);
    return true;
  };
  if (record === undefined || db.isTransaction) return release(db);
  return (db as Kysely<Database>).transaction().execute(release);
}

/**
 * Keeps `holder`'s lease while a job runs: renewed every third of `leaseMs` (at least every 100 ms);
 * `lost` aborts when a renewal finds it held by another. `stop` ends the renewals.
 */
export function keepLease(db: Db, lease: LeaseName, holder: string, leaseMs: number, now: () => number): { lost: AbortSignal; stop(): void } {
  const lost = new AbortController();
  const renewal = setInterval(() => {
    void renewLease(db, lease, holder, now() + leaseMs).then(
      (held) => held || lost.abort(),
      () => {},
    );
  }, Math.max(leaseMs / 3, 100));
  return { lost: lost.signal, stop: () => clearInterval(renewal) };
}
