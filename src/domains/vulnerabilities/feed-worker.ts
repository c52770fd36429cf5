import type { Kysely } from "kysely";
import type { AdvisoryFeedsConfig } from "../../config.js";
import type { Logger } from "../../logger.js";
import type { OutboundPolicy } from "../../outbound/fetch.js";
import type { Reactions } from "../kit/reactions.js";
import type { Database } from "../kit/schema.js";
import { leaseHolder, periodicJob, type Job } from "../kit/jobs.js";
import { removeStaleDownloads } from "./feed-downloads.js";
import { syncAdvisoryFeed, type FeedSyncReport } from "./feed-sync.js";
import { feedRows, type AdvisoryFeedRow } from "./store/feeds.js";

/** Longest wait between two looks at whether a feed is due, ms. */
const MAX_POLL_MS = 10_000;

/** What the worker reports as it goes (the server's metrics). */
export interface FeedObserver {
  /** Each sync this process ran (not the skipped ones). */
  synced(report: Exclude<FeedSyncReport, { result: "skipped" }>): void;
  /** Each feed's stored state after each look (a sync by any process shows). */
  state(row: Pick<AdvisoryFeedRow, "url" | "last_success_time" | "last_attempt_time" | "failures">): void;
}

/** The job: `drain` runs a look at every feed now and waits for them. */
export type FeedSyncWorker = Required<Job>;

/** The outbound policy of feeds, naming the flags that relax it. */
export function feedPolicy(config: AdvisoryFeedsConfig): OutboundPolicy {
  return {
    allowHttp: config.allowHttp,
    allowPrivateAddresses: config.allowPrivateAddresses,
    relaxedBy: { http: "--allow-http-feeds", privateAddresses: "--allow-private-feeds" },
    timeoutMs: config.timeoutMs,
    maxBytes: config.maxBytes,
    ...(config.minBytesPerSecond > 0 && { minRate: { bytesPerSecond: config.minBytesPerSecond, windowMs: config.rateWindowMs } }),
  };
}

/** One log line per sync: info when it went well, warn when it failed. */
export function logFeedSync(logger: Logger, report: FeedSyncReport): void {
  if (report.result === "skipped") return;
  const fields = { feed: report.feed, result: report.result, ms: report.ms };
  if (report.result === "failed") logger.warn("advisory feed sync failed", { ...fields, error: report.error, failures: report.failures });
  else logger.info("advisory feed synced", { ...fields, ...(report.result === "imported" && report.counts) });
}

/** Removes the temporary downloads of processes of this host that died without removing them (logged). */
async function removeStaleFeedDownloads(logger: Logger): Promise<void> {
  try {
    const removed = await removeStaleDownloads();
    if (removed.length > 0) logger.info("removed the temporary downloads of advisory feed syncs that did not end", { folders: removed });
  } catch (error) {
    logger.warn("could not look for stale advisory feed downloads", { error: String(error) });
  }
}

/**
 * Keeps `config.urls` current in the server process. Each feed has its own schedule: every
 * `min(intervalMs, 10 s)` it is looked at and, when due and its lease is taken, synced
 * (`syncAdvisoryFeed`), so a feed that is slow or hangs holds back only itself, never the others
 * (each download is cut by the policy's deadline and rate floor). With several replicas on one
 * database each feed is synced by one of them, once per interval. A sync runs beside the API
 * (streamed downloads, batched import) and never stops the server; its failure is logged, counted
 * and retried after the backoff. At start, the temporary downloads of dead processes are removed
 * (`removeStaleDownloads`). Closing aborts the downloads in progress.
 */
export function startFeedSync(options: { db: Kysely<Database>; config: AdvisoryFeedsConfig; logger: Logger; observer?: FeedObserver; reactions: Reactions }): FeedSyncWorker {
  const { db, config, logger, observer, reactions } = options;
  const holder = leaseHolder();
  const policy = feedPolicy(config);
  void removeStaleFeedDownloads(logger);

  async function look(url: string, signal: AbortSignal): Promise<void> {
    const report = await syncAdvisoryFeed(db, url, { policy, holder, leaseMs: config.leaseMs, intervalMs: config.intervalMs, signal, reactions });
    // Stopped by close(): not a failure of the feed.
    if (signal.aborted) return;
    logFeedSync(logger, report);
    if (report.result !== "skipped") observer?.synced(report);
    for (const row of await feedRows(db, [url])) observer?.state(row);
  }

  const every = Math.min(config.intervalMs, MAX_POLL_MS);
  const feeds = config.urls.map((url) =>
    periodicJob(every, (signal) => look(url, signal), (error) => logger.error("advisory feed sync failed", { feed: url, error: String(error) }), { startNow: true }),
  );
  return {
    async close() {
      await Promise.all(feeds.map((feed) => feed.close()));
    },
    async drain() {
      await Promise.all(feeds.map((feed) => feed.drain()));
    },
  };
}
