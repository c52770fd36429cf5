import type { Kysely } from "kysely";
import { releaseLease, renewLease, takeLease } from "../../kit/jobs.js";
import type { Database, Db } from "../../kit/schema.js";

/** The retention job's lease (one for every replica) and the name of its row of `retention_lease` (when the last pass ended). */
const LEASE = { job: "retention" };
const NAME = "retention";

/** Thrown inside a pass's transaction when its holder lost the lease: the transaction rolls back. */
export class RetentionLeaseLost extends Error {
  constructor(holder: string) {
    super(`${holder} no longer holds the retention lease`);
    this.name = "RetentionLeaseLost";
  }
}

/**
 * Takes the retention lease for `holder` until `now + leaseMs` when nobody else holds it (an
 * expired lease is taken over) and, unless `force`, when the last pass ended `intervalMs` ago or
 * more (`takeLease`). True when taken.
 */
export async function takeRetentionLease(db: Kysely<Database>, holder: string, now: number, options: { leaseMs: number; intervalMs: number; force?: boolean }): Promise<boolean> {
  const due = async (db: Db) => {
    if (options.force) return true;
    const row = await db.selectFrom("retention_lease").select("last_run_time").where("name", "=", NAME).executeTakeFirst();
    return Number(row?.last_run_time ?? 0) + options.intervalMs <= now || undefined;
  };
  return (await takeLease(db, LEASE, holder, now, options.leaseMs, due)) ?? false;
}

/**
 * Extends `holder`'s lease to `until`, in the caller's transaction; throws RetentionLeaseLost when
 * it no longer holds it. Run first in every transaction that removes something: on PostgreSQL the
 * update locks the lease until that transaction ends, so a replica taking the lease over waits for
 * it, and a holder whose lease was taken over removes nothing.
 */
export async function fenceRetentionLease(db: Db, holder: string, until: number): Promise<void> {
  if (!(await renewLease(db, LEASE, holder, until))) throw new RetentionLeaseLost(holder);
}

/** Ends `holder`'s pass: gives the lease back and records when (nothing when it no longer holds it). */
export async function finishRetentionPass(db: Kysely<Database>, holder: string, now: number): Promise<void> {
  await releaseLease(db, LEASE, holder, async (trx) => {
    await trx.insertInto("retention_lease").values({ name: NAME, last_run_time: now }).onConflict((oc) => oc.column("name").doUpdateSet({ last_run_time: now })).execute();
  });
}
