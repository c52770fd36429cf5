import type { Kysely } from "kysely";
import type { RetentionConfig } from "../../config.js";
import type { Logger } from "../../logger.js";
import { leaseHolder, periodicJob, type Job } from "../kit/jobs.js";
import type { Database } from "../kit/schema.js";
import { runRetentionPass, type RepoRetention } from "./retention-pass.js";
import { finishRetentionPass, RetentionLeaseLost, takeRetentionLease } from "./store/retention-lease.js";

/** Longest wait between two looks at whether a pass is due, ms. */
const MAX_POLL_MS = 10_000;

/**
 * Takes the retention lease and runs one pass (`runRetentionPass`); undefined when another process
 * holds the lease or, unless `force`, when the last pass is younger than the interval. The lease
 * is given back when the pass ends, whatever its outcome.
 */
export async function leasedRetentionPass(
  db: Kysely<Database>,
  options: { holder: string; config: RetentionConfig; typePrefix: string; force?: boolean; repoUid?: string; signal?: AbortSignal },
): Promise<RepoRetention[] | undefined> {
  const { holder, config } = options;
  if (!(await takeRetentionLease(db, holder, Date.now(), { leaseMs: config.leaseMs, intervalMs: config.intervalMs, force: options.force }))) return undefined;
  try {
    return await runRetentionPass(db, { now: Date.now(), typePrefix: options.typePrefix, holder, leaseMs: config.leaseMs, repoUid: options.repoUid, signal: options.signal });
  } finally {
    await finishRetentionPass(db, holder, Date.now());
  }
}

/** One log line per repo a pass removed something from. */
export function logRetention(logger: Logger, outcomes: readonly RepoRetention[]): void {
  for (const o of outcomes) {
    logger.info("retention removed", { repository: o.repository, repoUid: o.repoUid, policy: o.policyUid, tags: o.deletedTags.length, manifests: o.deletedManifests.length, keptTags: o.keptTags });
  }
}

/**
 * Applies the retention policies in the server process: every `min(intervalMs, 10 s)` it looks
 * whether a pass is due (the last one, by any replica, ended `intervalMs` ago) and runs it when it
 * takes the lease, so with several replicas on one database one of them runs each pass. A pass
 * that lost its lease (it stalled past it and another took over) stops at its next repo.
 */
export function startRetentionWorker(options: { db: Kysely<Database>; config: RetentionConfig; logger: Logger; typePrefix: string }): Required<Job> {
  const { db, config, logger, typePrefix } = options;
  const holder = leaseHolder();
  const pass = async (signal: AbortSignal, force: boolean) => {
    const outcomes = await leasedRetentionPass(db, { holder, config, typePrefix, force, signal });
    if (outcomes) logRetention(logger, outcomes);
  };
  const failed = (error: unknown) => {
    if (error instanceof RetentionLeaseLost) logger.warn("retention pass stopped: another process took its lease over", {});
    else logger.error("retention pass failed", { error: String(error) });
  };
  return periodicJob(config.intervalMs === 0 ? 0 : Math.min(config.intervalMs, MAX_POLL_MS), pass, failed);
}
