import type { Selectable } from "kysely";
import { rootOf } from "../../../aip/uidp.js";
import { holdsItsShare, organizationsAtShare, took, type OrganizationTurns } from "../../kit/jobs.js";
import type { Db } from "../../kit/schema.js";
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
    .values({
      digest: job.digest,
      repo_uid: job.repoUid,
      organization: job.repoUid === "" ? "" : rootOf(job.repoUid),
      kind: job.kind,
      generation: 1,
      attempts: 0,
      next_attempt_time: now,
      lease_until: 0,
      create_time: now,
    })
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
        organization: eb.case().when(eb(eb.ref("excluded.kind"), "=", "inventory")).then(eb.ref("excluded.organization")).else(eb.ref("report_jobs.organization")).end(),
        attempts: 0,
        next_attempt_time: eb.ref("excluded.next_attempt_time"),
      })),
    )
    .execute();
}

/**
 * A worker's turns between organizations (a job's `organization`, `OrganizationTurns`), which
 * `claimReportJobs` reads and updates: it adds each job it takes to `held` and `served` (the
 * worker takes a job out of `held` when it ends).
 */
export interface ClaimTurns extends OrganizationTurns {
  /** The organizations served in the current round: each other organization with a due job is served first. */
  served: Set<string>;
}

/** Organizations one round remembers at most; past them a new round begins. */
const MAX_ROUND = 256;
/** Due jobs read at a time. */
const WINDOW = 8;

/** Due, unleased jobs of organizations not in `skip`, oldest due first. */
function dueJobs(db: Db, now: number, skip: string[]) {
  let query = db.selectFrom("report_jobs").selectAll().where("next_attempt_time", "<=", now).where("lease_until", "<=", now);
  if (skip.length > 0) query = query.where("organization", "not in", skip);
  return query.orderBy("next_attempt_time").orderBy("digest").limit(WINDOW).execute();
}

/**
 * Takes up to `limit` due jobs for `leaseMs`: each with a conditional update on its generation and
 * free lease, so two workers (two processes on one database) never hold one job at once. Taking a
 * job counts an attempt (`attempts` is the number of runs started, this one included), so a run
 * that kills its process still counts. Without `turns`, the oldest due first. With `turns`, round
 * robin between organizations: the oldest due job of each organization not yet served this round
 * (a round ends when every organization with a due job was served), none of an organization that
 * holds `perOrganization` jobs; so one organization's queue, however long or slow, delays
 * another's job by at most one job of each organization ahead of it.
 */
export async function claimReportJobs(db: Db, now: number, leaseMs: number, limit: number, turns?: ClaimTurns): Promise<ReportJobRow[]> {
  const claimed: ReportJobRow[] = [];
  const full = (organization: string) => holdsItsShare(turns, organization);
  // Each pass takes a job or finds a lost race (then the job is leased, or enqueued again): bounded.
  for (let pass = 0; claimed.length < limit && pass < limit * 2 + 2; pass++) {
    if (turns !== undefined && turns.served.size > MAX_ROUND) turns.served.clear();
    const fullOrganizations = organizationsAtShare(turns);
    let due = await dueJobs(db, now, [...fullOrganizations, ...(turns?.served ?? [])]);
    if (due.length === 0 && turns !== undefined && turns.served.size > 0) {
      turns.served.clear();
      due = await dueJobs(db, now, fullOrganizations);
    }
    if (due.length === 0) break;
    for (const row of due) {
      if (claimed.length >= limit) break;
      if (turns !== undefined && (full(row.organization) || turns.served.has(row.organization))) continue;
      const result = await db
        .updateTable("report_jobs")
        .set({ lease_until: now + leaseMs, attempts: Number(row.attempts) + 1 })
        .where("digest", "=", row.digest)
        .where("generation", "=", row.generation)
        .where("lease_until", "<=", now)
        .executeTakeFirst();
      if (Number(result.numUpdatedRows) !== 1) continue;
      claimed.push({ ...row, generation: Number(row.generation), attempts: Number(row.attempts) + 1, lease_until: now + leaseMs });
      took(turns, row.organization);
      turns?.served.add(row.organization);
    }
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
