import { create } from "@bufbuild/protobuf";
import type { Kysely } from "kysely";
import { RetentionOutcomeSchema } from "../../../gen/platform/registry/v2/retention_policy_pb.js";
import { toTimestamp } from "../../aip/time.js";
import { inTransaction } from "../../store/transaction.js";
import { getGroup } from "../iam/index.js";
import type { Database, Db } from "../kit/schema.js";
import { recordHostChange } from "./events.js";
import { immutableTagsOf } from "./immutable-tags.js";
import { planRetention, type RetentionRules } from "./retention.js";
import { takeReferenceLock } from "./store/reference-lock.js";
import { getRepo } from "./store/repos.js";
import { fenceRetentionLease } from "./store/retention-lease.js";
import { effectiveRetentionPolicy, keepTagsOf, reposUnderPolicies, type RetentionPolicyRow } from "./store/retention-policies.js";
import { deleteTagIfUnchanged, deleteUntaggedManifest, readRetentionInput } from "./store/retention-rows.js";
import { recordTagDeletions } from "./tag-moves.js";

/** What a pass removed from one repo, or in a dry run would remove. */
export interface RepoRetention {
  /** `<organization>/<repo name>`. */
  repository: string;
  repoUid: string;
  policyUid: string;
  deletedTags: string[];
  deletedManifests: string[];
  keptTags: number;
}

export interface RetentionPassOptions {
  now: number;
  typePrefix: string;
  /** Only list what would go: nothing is removed, no lease is needed. */
  dryRun?: boolean;
  /** Who holds the retention lease (`takeRetentionLease`) for a real pass. */
  holder?: string;
  /** How long each removal extends the lease, ms. */
  leaseMs?: number;
  /** Only this repo (a uid). */
  repoUid?: string;
  /** Stops the pass between repos. */
  signal?: AbortSignal;
}

/** The rules a policy row states. */
export function rulesOf(policy: RetentionPolicyRow): RetentionRules {
  return { keepLast: policy.keep_last, keepTags: keepTagsOf(policy), expireAfterMs: policy.expire_after_ms, untaggedGraceMs: policy.untagged_grace_ms };
}

/**
 * Applies every repo's retention policy once (retention.ts), a repo at a time, each in its own
 * transaction that first renews the lease (`fenceRetentionLease`): a process that lost the lease
 * removes nothing. The transaction then takes the repo's reference lock (reference-lock.ts), so the
 * repo is read and planned after every push naming its manifests committed, and no push names one
 * until the removals commit; a tag is deleted only if it is still as read, a manifest only if no
 * tag points at it; each deleted tag records `platform.registry.tag.deleted`, and a repo that lost
 * anything `platform.registry.retention.applied` (a RetentionOutcome). Returns the repos something
 * went from (or would), by uid.
 */
export async function runRetentionPass(db: Kysely<Database>, options: RetentionPassOptions): Promise<RepoRetention[]> {
  const repos = options.repoUid === undefined ? await reposUnderPolicies(db) : [await getRepo(db, options.repoUid)];
  const outcomes: RepoRetention[] = [];
  for (const repo of repos) {
    if (options.signal?.aborted) break;
    const outcome = options.dryRun ? (await planRepo(db, repo.uid, options.now))?.outcome : await applyToRepo(db, repo.uid, options);
    if (outcome && (outcome.deletedTags.length > 0 || outcome.deletedManifests.length > 0)) outcomes.push(outcome);
  }
  return outcomes;
}

/** What the repo's policy removes now, as read (nothing written); undefined when no policy applies. */
async function planRepo(db: Db, repoUid: string, now: number) {
  const repo = await getRepo(db, repoUid);
  const policy = await effectiveRetentionPolicy(db, repo);
  if (!policy) return undefined;
  const input = await readRetentionInput(db, repo.uid);
  const plan = planRetention(rulesOf(policy), { ...input, immutableTags: immutableTagsOf(repo) }, now);
  const organization = await getGroup(db, repo.org_uid);
  const outcome: RepoRetention = {
    repository: `${organization.name}/${repo.name}`,
    repoUid: repo.uid,
    policyUid: policy.uid,
    deletedTags: plan.deleteTags.map((t) => t.name),
    deletedManifests: plan.deleteManifests,
    keptTags: plan.keptTags,
  };
  return { repo, plan, outcome };
}

async function applyToRepo(db: Kysely<Database>, repoUid: string, options: RetentionPassOptions): Promise<RepoRetention | undefined> {
  const { holder, now } = options;
  if (holder === undefined) throw new Error("a retention pass that removes needs the lease's holder");
  return inTransaction(db, options.signal, async (trx) => {
    await fenceRetentionLease(trx, holder, Date.now() + (options.leaseMs ?? 60_000));
    await takeReferenceLock(trx, repoUid);
    const planned = await planRepo(trx, repoUid, now);
    if (!planned) return undefined;
    const { repo, plan } = planned;
    const deletedTags = [];
    for (const tag of plan.deleteTags) {
      const deleted = await deleteTagIfUnchanged(trx, tag);
      if (deleted) deletedTags.push(deleted);
    }
    const deletedManifests = [];
    for (const digest of plan.deleteManifests) if (await deleteUntaggedManifest(trx, repo.uid, digest)) deletedManifests.push(digest);
    const events = { now, typePrefix: options.typePrefix, via: "registry retention" };
    await recordTagDeletions(trx, repo, deletedTags, events);
    const outcome: RepoRetention = {
      ...planned.outcome,
      deletedTags: deletedTags.map((t) => t.name),
      deletedManifests,
      keptTags: plan.keptTags + plan.deleteTags.length - deletedTags.length,
    };
    if (deletedTags.length > 0 || deletedManifests.length > 0) {
      const message = create(RetentionOutcomeSchema, { ...outcome, time: toTimestamp(now) });
      await recordHostChange(trx, { name: "platform.registry.retention.applied", subject: repo.uid, group: repo.group_uid, schema: RetentionOutcomeSchema, message }, events);
    }
    return outcome;
  });
}
