import type { Selectable } from "kysely";
import type { Db } from "../../../store/tables.js";
import type { ReportJobTable } from "../report-tables.js";

export type ReportJobRow = Selectable<ReportJobTable>;

/**
 * The queue of report work, one row per digest. Enqueueing is an upsert that bumps the row's
 * `generation`, so work asked for while a worker holds the job is not lost: `finishReportJob`
 * deletes only the generation it was given, and frees a newer one for another run. An
 * `inventory` job absorbs a `match` (an inventory ends by matching).
 */
export async function enqueueReportJob(db: Db, job: { digest: string; repoUid: string; kind: "inventory" | "match" }, now: number): Promise<void> {
  // A match reads no blobs: it keeps the repo an inventory queued before it named.
  await db
    .insertInto("report_jobs")
    .values({ digest: job.digest, repo_uid: job.repoUid, kind: job.kind, generation: 1, attempts: 0, next_attempt_time: now, lease_until: 0, create_time: now })
    .onConflict((oc) =>
      oc.column("digest").doUpdateSet((eb) => ({
        generation: eb(eb.ref("report_jobs.generation"), "+", 1),
        kind: eb
          .case()
          .when(eb.or([eb(eb.ref("report_jobs.kind"), "=", "inventory"), eb(eb.ref("excluded.kind"), "=", "inventory")]))
          .then("inventory" as const)
          .else("match" as const)
          .end(),
        repo_uid: eb.case().when(eb(eb.ref("excluded.kind"), "=", "inventory")).then(eb.ref("excluded.repo_uid")).else(eb.ref("report_jobs.repo_uid")).end(),
        attempts: 0,
        next_attempt_time: eb.ref("excluded.next_attempt_time"),
      })),
    )
    .execute();
}

/**
 * Takes up to `limit` due jobs for `leaseMs`: each with a conditional update on its generation and
 * free lease, so two workers (two processes on one database) never hold one job at once. Taking a
 * job counts an attempt (`attempts` is the number of runs started, this one included), so a run
 * that kills its process still counts. Returns the jobs this worker got, oldest due first.
 */
export async function claimReportJobs(db: Db, now: number, leaseMs: number, limit: number): Promise<ReportJobRow[]> {
  const due = await db
    .selectFrom("report_jobs")
    .selectAll()
    .where("next_attempt_time", "<=", now)
    .where("lease_until", "<=", now)
    .orderBy("next_attempt_time")
    .orderBy("digest")
    .limit(limit * 4)
    .execute();
  const claimed: ReportJobRow[] = [];
  for (const row of due) {
    if (claimed.length >= limit) break;
    const result = await db
      .updateTable("report_jobs")
      .set({ lease_until: now + leaseMs, attempts: Number(row.attempts) + 1 })
      .where("digest", "=", row.digest)
      .where("generation", "=", row.generation)
      .where("lease_until", "<=", now)
      .executeTakeFirst();
    if (Number(result.numUpdatedRows) === 1) claimed.push({ ...row, generation: Number(row.generation), attempts: Number(row.attempts) + 1, lease_until: now + leaseMs });
  }
  return claimed;
}

/** The job's work is written: it goes, unless it was enqueued again meanwhile (then it is freed to run again). */
export async function finishReportJob(db: Db, job: Pick<ReportJobRow, "digest" | "generation">): Promise<void> {
  const result = await db.deleteFrom("report_jobs").where("digest", "=", job.digest).where("generation", "=", job.generation).executeTakeFirst();
  if (Number(result.numDeletedRows) === 0) await db.updateTable("report_jobs").set({ lease_until: 0 }).where("digest", "=", job.digest).execute();
}

/** A worker stopping gives the job back at once, and its attempt (its work was not written). */
export async function releaseReportJob(db: Db, job: Pick<ReportJobRow, "digest" | "generation" | "attempts">): Promise<void> {
  await db
    .updateTable("report_jobs")
    .set({ lease_until: 0, attempts: Math.max(0, job.attempts - 1) })
    .where("digest", "=", job.digest)
    .where("generation", "=", job.generation)
    .execute();
}

/** The job failed for a reason a later run may not meet: run it again at `nextAttempt` (the attempt stays counted). */
export async function retryReportJob(db: Db, job: Pick<ReportJobRow, "digest" | "generation" | "attempts">, nextAttempt: number): Promise<void> {
  await db
    .updateTable("report_jobs")
    .set({ attempts: job.attempts, next_attempt_time: nextAttempt, lease_until: 0 })
    .where("digest", "=", job.digest)
    .where("generation", "=", job.generation)
    .execute();
}

/** Jobs waiting or running (for operators and tests). */
export async function pendingReportJobs(db: Db): Promise<number> {
  const row = await db.selectFrom("report_jobs").select((eb) => eb.fn.countAll().as("n")).executeTakeFirstOrThrow();
  return Number(row.n);
}

/** Queues a new match of each of `digests` (an advisory import changed what may affect them). */
export async function enqueueMatches(db: Db, digests: readonly string[], now: number): Promise<void> {
  for (const digest of digests) await enqueueReportJob(db, { digest, repoUid: "", kind: "match" }, now);
}
