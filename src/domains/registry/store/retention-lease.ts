import type { Kysely } from "kysely";
import { dialectOfDb } from "../../../store/dialect.js";
import type { Database, Db } from "../../kit/schema.js";

/** The lease's one row. */
const NAME = "retention";

/** Thrown inside a pass's transaction when its holder lost the lease: the transaction rolls back. */
export class RetentionLeaseLost extends Error {
  constructor(holder: string) {
    super(`${holder} no longer holds the retention lease`);
    this.name = "RetentionLeaseLost";
  }
}

/** When the last pass ended (epoch ms; 0 before the first) and whether a lease runs for another holder now. */
export async function retentionLeaseState(db: Db): Promise<{ holder: string; lease_until: number; last_run_time: number } | undefined> {
  const row = await db.selectFrom("retention_lease").select(["holder", "lease_until", "last_run_time"]).where("name", "=", NAME).executeTakeFirst();
  return row && { holder: row.holder, lease_until: Number(row.lease_until), last_run_time: Number(row.last_run_time) };
}

/**
 * Takes the retention lease for `holder` until `now + leaseMs` when nobody else holds it (an
 * expired lease is taken over) and, unless `force`, when the last pass ended `intervalMs` ago or
 * more. True when taken. On PostgreSQL the row is read `FOR UPDATE SKIP LOCKED`, so a replica that
 * finds another taking it moves on without waiting; the conditional update decides either way.
 */
export async function takeRetentionLease(db: Kysely<Database>, holder: string, now: number, options: { leaseMs: number; intervalMs: number; force?: boolean }): Promise<boolean> {
  const due = (row: { holder: string; lease_until: number; last_run_time: number }) =>
    (row.lease_until <= now || row.holder === holder) && (options.force || row.last_run_time + options.intervalMs <= now);
  const seen = await retentionLeaseState(db);
  if (seen && !due(seen)) return false;
  if (!seen) await db.insertInto("retention_lease").values({ name: NAME, holder: "", lease_until: 0, last_run_time: 0 }).onConflict((oc) => oc.column("name").doNothing()).execute();
  const postgres = dialectOfDb(db) === "postgres";
  return db.transaction().execute(async (trx) => {
    let query = trx.selectFrom("retention_lease").select(["holder", "lease_until", "last_run_time"]).where("name", "=", NAME);
    if (postgres) query = query.forUpdate().skipLocked();
    const row = await query.executeTakeFirst();
    if (!row || !due({ holder: row.holder, lease_until: Number(row.lease_until), last_run_time: Number(row.last_run_time) })) return false;
    const result = await trx
      .updateTable("retention_lease")
      .set({ holder, lease_until: now + options.leaseMs })
      .where("name", "=", NAME)
      .where((eb) => eb.or([eb("lease_until", "<=", now), eb("holder", "=", holder)]))
      .executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  });
}

/**
 * Extends `holder`'s lease to `until`, in the caller's transaction; throws RetentionLeaseLost when
 * it no longer holds it. Run first in every transaction that removes something: on PostgreSQL the
 * update locks the row until that transaction ends, so a replica taking the lease over waits for
 * it, and a holder whose lease was taken over removes nothing.
 */
export async function fenceRetentionLease(db: Db, holder: string, until: number): Promise<void> {
  const result = await db.updateTable("retention_lease").set({ lease_until: until }).where("name", "=", NAME).where("holder", "=", holder).executeTakeFirst();
  if (Number(result.numUpdatedRows) !== 1) throw new RetentionLeaseLost(holder);
}

/** Ends `holder`'s pass: records when and gives the lease back (nothing when it no longer holds it). */
export async function finishRetentionPass(db: Db, holder: string, now: number): Promise<void> {
  await db.updateTable("retention_lease").set({ holder: "", lease_until: 0, last_run_time: now }).where("name", "=", NAME).where("holder", "=", holder).execute();
}
