import type { Kysely } from "kysely";
import { appendAll, createLayerCache, createScanThreads, InventoryError, SCAN_THREADS_DEFAULTS, type InventoryPackage, type LayerCache, type LayerLimits, type ScanThreads, type ScanThreadsOptions } from "../../engines/inventory/index.js";
import type { Logger } from "../../logger.js";
import type { ContentStore } from "./content/content-store.js";
import type { Database, Db } from "../kit/schema.js";
import { inTransaction } from "../../store/transaction.js";
import { apiEventType, emitEvent } from "../events/index.js";
import { advisoriesNamed, recordsDatabaseSpecific } from "../vulnerabilities/index.js";
import { attestedInventory, inventoryImage } from "./image-inventory.js";
import { ensureReport, findingsOf, manifestsWithoutReport, packagesOf, replaceInventory, reportsOf, writeReport, type ImageReportRow } from "./store/image-reports.js";
import { claimReportJobs, enqueueReportJob, finishReportJob, releaseReportJob, retryReportJob, type ClaimTurns, type ReportJobRow } from "./store/report-jobs.js";
import { refreshResolvedReports } from "./store/resolved-vulns.js";
import { queueJob } from "../kit/jobs.js";
import { inTurns } from "./turns.js";
import { candidateNames, countBySeverity, matchPackages, packagesNamed, type Finding } from "./vulnerability-match.js";

/**
 * Works off the report queue in the server process: every `pollIntervalMs` it claims due jobs
 * (a lease, so several processes on one database never work one job at once), reads the image's
 * inventory (an `inventory` job) or its stored packages (a `match` job), matches them against the
 * advisories, and writes the report, its event and the resolved-vulnerability reports it
 * completes in one transaction. A job that fails for a reason a retry may cure (the store, the
 * content store) is retried with backoff, `maxAttempts` times; an unreadable image, one past a
 * limit or out of time fails its report with the reason at once. Pushes never wait for it.
 * Organizations take turns: jobs are claimed round robin between them, and one organization holds
 * at most `perOrganization` of the `concurrency` slots, so its slow or hostile images leave the
 * others a slot. Layers read for one image are kept for the next (`createLayerCache`). Layers are
 * read and packages parsed on scan threads (`createScanThreads`, one per slot by default), never
 * on the event loop that serves the hosts.
 */

export interface ReportWorkerOptions {
  db: Kysely<Database>;
  content: ContentStore;
  logger: Logger;
  /** The first segments of the report events' types. */
  typePrefix: string;
  pollIntervalMs?: number;
  /** Jobs worked at once; default the scan threads' size. */
  concurrency?: number;
  /** The scan threads inventories run on: their number, heap and CPU budget (SCAN_THREADS_DEFAULTS). */
  scan?: Partial<ScanThreadsOptions>;
  /** Jobs of one organization worked at once; default half of `concurrency`, at least 1. */
  perOrganization?: number;
  /** The time one image's inventory may take, ms (less than `leaseMs`, or another worker would take the job meanwhile). */
  inventoryTimeoutMs?: number;
  /** How long a claimed job is held before another worker may take it, ms. */
  leaseMs?: number;
  maxAttempts?: number;
  limits?: Partial<LayerLimits>;
  now?: () => number;
}

export const REPORT_WORKER_DEFAULTS = { pollIntervalMs: 500, leaseMs: 10 * 60_000, maxAttempts: 5, inventoryTimeoutMs: 5 * 60_000 };

export interface ReportWorker {
  /** Stops claiming, aborts the jobs in flight (given back to the queue, nothing of them written) and waits for them. */
  close(): Promise<void>;
  /** Claims and works due jobs until none is left (tests, the bench). */
  drain(): Promise<void>;
}

/** What a report is compared by to tell whether it changed. */
const signature = (report: Pick<ImageReportRow, "status" | "reason" | "packages" | "package_source">, findings: readonly Pick<Finding, "advisoryId" | "purl" | "fixedVersion" | "severity">[]) =>
  JSON.stringify([report.status, report.reason, report.packages, report.package_source, findings.map((f) => [f.advisoryId, f.purl, f.fixedVersion, f.severity]).sort()]);

/**
 * Findings of stored packages against the advisories stored now. The packages are gone through in
 * slices (`inTurns`): an image may hold hundreds of thousands.
 */
export async function findingsFor(db: Db, packages: readonly InventoryPackage[]): Promise<Finding[]> {
  const names = new Set<string>();
  await inTurns(packages, (slice) => {
    for (const name of candidateNames(slice)) names.add(name);
  });
  const advisories: Awaited<ReturnType<typeof advisoriesNamed>> = [];
  await inTurns([...names], async (slice) => appendAll(advisories, await advisoriesNamed(db, slice)));
  const named: InventoryPackage[] = [];
  await inTurns(packages, (slice) => appendAll(named, packagesNamed(slice, advisories)));
  const first = matchPackages(named, advisories);
  if (first.every((f) => f.severity !== "UNKNOWN")) return first;
  const specific = await recordsDatabaseSpecific(db, first.filter((f) => f.severity === "UNKNOWN").map((f) => f.advisoryId));
  return matchPackages(named, advisories, (id) => specific.get(id));
}

/**
 * Writes the outcome of a job: the inventory (when read) first, in slices (`replaceInventory`),
 * then in one transaction the report and its findings, an event per repo holding the image when
 * the report is new or changed, the resolved reports it completes, and the job's removal.
 */
async function record(
  db: Kysely<Database>,
  job: ReportJobRow,
  outcome: { status: "done" | "failed"; reason: string; distro?: string; packages?: InventoryPackage[]; source?: string; findings: Finding[]; packageCount: number },
  typePrefix: string,
  now: number,
): Promise<void> {
  if (outcome.packages !== undefined) await replaceInventory(db, job.digest, outcome.packages);
  await inTransaction(db, undefined, async (trx) => {
    await ensureReport(trx, job.digest, now);
    const before = (await reportsOf(trx, [job.digest])).get(job.digest)!;
    const previous = (await findingsOf(trx, [job.digest])).get(job.digest) ?? [];
    const counts = countBySeverity(outcome.findings);
    const row: ImageReportRow = {
      digest: job.digest,
      status: outcome.status,
      reason: outcome.reason,
      distro: outcome.distro ?? before.distro,
      packages: outcome.packageCount,
      package_source: outcome.source ?? before.package_source,
      critical: counts.CRITICAL,
      high: counts.HIGH,
      medium: counts.MEDIUM,
      low: counts.LOW,
      unknown: counts.UNKNOWN,
      create_time: before.create_time,
      update_time: now,
    };
    const changed =
      before.status === "pending" ||
      signature(before, previous.map((f) => ({ advisoryId: f.advisory_id, purl: f.purl, fixedVersion: f.fixed_version, severity: f.severity }))) !== signature(row, outcome.findings);
    if (changed) {
      await writeReport(trx, row, outcome.findings);
      const holders = await trx
        .selectFrom("manifests")
        .innerJoin("repos", "repos.uid", "manifests.repo_uid")
        .select(["repos.uid", "repos.group_uid", "repos.name"])
        .where("manifests.digest", "=", job.digest)
        .orderBy("repos.uid")
        .execute();
      for (const repo of holders) {
        await emitEvent(
          trx,
          {
            type: apiEventType(typePrefix, `platform.registry.vulnerability_report.${before.status === "pending" ? "created" : "updated"}`),
            subject: repo.uid,
            group: repo.group_uid,
            actor: { subject: "", act: { via: "vulnerability reports" } },
            body: {
              repo: repo.name,
              digest: job.digest,
              status: row.status,
              ...(row.reason === "" ? {} : { reason: row.reason }),
              counts: { critical: row.critical, high: row.high, medium: row.medium, low: row.low, unknown: row.unknown },
            },
          },
          now,
        );
      }
      await refreshResolvedReports(trx, job.digest, now);
    }
    await finishReportJob(trx, job);
  });
}

/** Works one claimed job to its end (written, failed, or left to a retry); inventories on `threads` when given, else on the caller's thread. */
export async function runReportJob(
  options: Pick<ReportWorkerOptions, "db" | "content" | "logger" | "typePrefix" | "limits" | "inventoryTimeoutMs"> & {
    now: () => number;
    maxAttempts: number;
    signal?: AbortSignal;
    cache?: LayerCache;
    threads?: ScanThreads;
  },
  job: ReportJobRow,
): Promise<void> {
  const { db, content, logger, now } = options;
  if (job.attempts > options.maxAttempts) {
    // Every earlier run ended without a word: the process died during it (a decompression bomb, a crash).
    const reason = `the image could not be read: ${options.maxAttempts} attempts ended without finishing (the process stopped while reading it)`;
    logger.error("vulnerability report failed for good", { digest: job.digest, attempts: job.attempts - 1, reason });
    await record(db, job, { status: "failed", reason, findings: [], packageCount: 0 }, options.typePrefix, now()).catch(() => {});
    return;
  }
  try {
    if (job.kind === "match") {
      const report = (await reportsOf(db, [job.digest])).get(job.digest);
      if (report?.status === "failed") return await finishReportJob(db, job);
      const packages = await packagesOf(db, job.digest);
      await record(db, job, { status: "done", reason: "", findings: await findingsFor(db, packages), packageCount: packages.length }, options.typePrefix, now());
      return;
    }
    let inventory = await attestedInventory(db, job.repo_uid, job.digest);
    try {
      inventory ??= await inventoryImage(db, content, job.repo_uid, job.digest, {
        limits: options.limits,
        signal: options.signal,
        cache: options.cache,
        timeoutMs: options.inventoryTimeoutMs,
        threads: options.threads,
      });
    } catch (error) {
      if (!(error instanceof InventoryError) || options.signal?.aborted) throw error;
      logger.warn("image inventory failed", { digest: job.digest, reason: error.message });
      await record(db, job, { status: "failed", reason: error.message, packages: [], findings: [], packageCount: 0 }, options.typePrefix, now());
      return;
    }
    const findings = await findingsFor(db, inventory.packages);
    await record(db, job, { status: "done", reason: "", distro: inventory.distro, packages: inventory.packages, source: inventory.source, findings, packageCount: inventory.packages.length }, options.typePrefix, now());
    logger.info("vulnerability report written", { digest: job.digest, packages: inventory.packages.length, source: inventory.source, vulnerabilities: findings.length });
  } catch (error) {
    if (options.signal?.aborted) return await releaseReportJob(db, job).catch(() => {}); // the next worker does it
    const attempts = job.attempts;
    if (attempts >= options.maxAttempts) {
      logger.error("vulnerability report failed for good", { digest: job.digest, attempts, error: String(error) });
      await record(db, job, { status: "failed", reason: `the image could not be read: ${(error as Error).message}`, findings: [], packageCount: 0 }, options.typePrefix, now()).catch(() => {});
      return;
    }
    logger.warn("vulnerability report failed; will retry", { digest: job.digest, attempts, error: String(error) });
    await retryReportJob(db, job, now() + Math.min(300_000, 1_000 * 2 ** attempts)).catch(() => {});
  }
}

/** Queues an inventory for every stored image that has no report (images stored before reports existed, or by an older server). */
export async function queueMissingReports(db: Kysely<Database>, now: number): Promise<number> {
  let queued = 0;
  for (;;) {
    const batch = await manifestsWithoutReport(db, 500);
    if (batch.length === 0) return queued;
    await inTransaction(db, undefined, async (trx) => {
      for (const m of batch) {
        await ensureReport(trx, m.digest, now);
        await enqueueReportJob(trx, { digest: m.digest, repoUid: m.repo_uid, kind: "inventory" }, now);
      }
    });
    queued += batch.length;
  }
}

export function startReportWorker(options: ReportWorkerOptions): ReportWorker {
  const scan = { ...SCAN_THREADS_DEFAULTS, ...options.scan };
  const settings = { ...REPORT_WORKER_DEFAULTS, concurrency: scan.size, ...options };
  const threads = createScanThreads(scan);
  const turns: ClaimTurns = { perOrganization: options.perOrganization ?? Math.max(1, Math.floor(settings.concurrency / 2)), held: new Map(), served: new Set() };
  const cache = createLayerCache();
  const now = options.now ?? Date.now;
  let closed = false;
  const starting = queueMissingReports(options.db, now()).then(
    () => {},
    (error: unknown) => {
      if (!closed) options.logger.error("queueing missing reports failed", { error: String(error) });
    },
  );
  const queue = queueJob<ReportJobRow>({
    everyMs: settings.pollIntervalMs,
    concurrency: settings.concurrency,
    claim: (room) => claimReportJobs(options.db, now(), settings.leaseMs, room, turns),
    work: (job, signal) => runReportJob({ ...options, now, maxAttempts: settings.maxAttempts, inventoryTimeoutMs: settings.inventoryTimeoutMs, signal, cache, threads }, job),
    fair: { turns, organizationOf: (job) => job.organization },
    starting,
    claimFailed: (error) => options.logger.error("report queue poll failed", { error: String(error) }),
    workFailed: (job, error) => options.logger.error("report job failed", { digest: job.digest, error: String(error) }),
  });
  return {
    async close() {
      closed = true;
      await queue.close();
      await threads.close();
    },
    drain: queue.drain,
  };
}
