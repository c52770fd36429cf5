import type { Kysely } from "kysely";
import type { AdvisoryFeedsConfig } from "../../config.js";
import type { Logger } from "../../logger.js";
import type { OutboundPolicy } from "../../outbound/fetch.js";
import type { Database } from "../schema.js";
import { leaseHolder, periodicPass, type PeriodicPass } from "../periodic-pass.js";
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

/** The worker (a DomainWorker): `drain` runs a pass now and waits for it. */
export type FeedSyncWorker = PeriodicPass;

/** The outbound policy of feeds, naming the flags that relax it. */
export function feedPolicy(config: AdvisoryFeedsConfig): OutboundPolicy {
  return {
    allowHttp: config.allowHttp,
    allowPrivateAddresses: config.allowPrivateAddresses,
    relaxedBy: { http: "--allow-http-feeds", privateAddresses: "--allow-private-feeds" },
    timeoutMs: config.timeoutMs,
    maxBytes: config.maxBytes,
  };
}

/** One log line per sync: info when it went well, warn when it failed. */
export function logFeedSync(logger: Logger, report: FeedSyncReport): void {
  if (report.result === "skipped") return;
  const fields = { feed: report.feed, result: report.result, ms: report.ms };
  if (report.result === "failed") logger.warn("advisory feed sync failed", { ...fields, error: report.error, failures: report.failures });
  else logger.info("advisory feed synced", { ...fields, ...(report.result === "imported" && report.counts) });
}

/**
 * Keeps `config.urls` current in the server process: every `min(intervalMs, 10 s)` it looks at
 * each feed and syncs the due ones whose lease it takes (`syncAdvisoryFeed`), one feed at a time,
 * so with several replicas on one database each feed is synced by one of them, once per interval.
 * A sync runs beside the API (streamed downloads, batched import) and never stops the server; its
 * failure is logged, counted and retried after the backoff. Closing aborts a download in progress.
 */
export function startFeedSync(options: { db: Kysely<Database>; config: AdvisoryFeedsConfig; logger: Logger; observer?: FeedObserver }): FeedSyncWorker {
  const { db, config, logger, observer } = options;
  const holder = leaseHolder();
  const policy = feedPolicy(config);

  async function pass(signal: AbortSignal): Promise<void> {
    for (const url of config.urls) {
      if (signal.aborted) return;
      const report = await syncAdvisoryFeed(db, url, { policy, holder, leaseMs: config.leaseMs, intervalMs: config.intervalMs, signal });
      // Stopped by close(): not a failure of the feed.
      if (signal.aborted) return;
      logFeedSync(logger, report);
      if (report.result !== "skipped") observer?.synced(report);
    }
    for (const row of await feedRows(db, config.urls)) observer?.state(row);
  }

  const every = config.urls.length === 0 ? 0 : Math.min(config.intervalMs, MAX_POLL_MS);
  return periodicPass(every, pass, (error) => logger.error("advisory feed sync failed", { error: String(error) }), { startNow: true });
}
