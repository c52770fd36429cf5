import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import type { Kysely } from "kysely";
import { OsvFeedError, type OsvRecordError } from "../../engines/advisories/osv/errors.js";
import { readOsvFeed } from "../../engines/advisories/osv/feed.js";
import { outboundDownload, type OutboundPolicy } from "../../outbound/fetch.js";
import type { ImportCounts } from "../../store/batched-import.js";
import type { Reactions } from "../kit/reactions.js";
import type { Database } from "../kit/schema.js";
import { createDownloadDir, removeDownloadDir } from "./feed-downloads.js";
import { fetchNewerRecords } from "./folder-feed.js";
import { importOsvFeed } from "./osv-import.js";
import { keepLease } from "../kit/jobs.js";
import { feedLease, finishFeedSync, takeFeedLease, type FeedOutcome, type FeedState } from "./store/feeds.js";

/** The first retry after a failure waits this long; each next one twice as long, up to the sync interval. */
const FIRST_RETRY_MS = 30_000;

/** How one feed's sync went (a log line, the metrics, the CLI's summary). */
export type FeedSyncReport = { feed: string; ms: number } & (
  /** Not due, or another process holds its lease. */
  | { result: "skipped" }
  /** The feed answered 304 to the conditional GET: nothing read, nothing changed. */
  | { result: "not-modified" }
  /** Its records were read and imported (`counts` as `advisories import` counts them). */
  | { result: "imported"; counts: ImportCounts }
  /** Nothing was written; retried after the backoff. */
  | { result: "failed"; error: string; failures: number }
);

export interface FeedSyncOptions {
  /** Where feeds may be fetched from, and each download's deadline, rate floor and size cap. */
  policy: OutboundPolicy;
  /** Who syncs (one per worker or CLI run): the lease's holder. */
  holder: string;
  /** How long the lease lasts without renewal; renewed every third of it while the sync runs. */
  leaseMs: number;
  /** After a success the feed is due again this much later; a failure's backoff is at most this. */
  intervalMs: number;
  /** Sync even when not due (the CLI); a lease held by another still wins. */
  force?: boolean;
  /** Stops a download in progress (the server closing). */
  signal?: AbortSignal;
  now?: () => number;
  /** Each record refused (reported by the CLI; counted either way). */
  onRejected?: (error: OsvRecordError | OsvFeedError) => void;
  /** Every domain's reactions, run in each batch's transaction of the import (default: none). */
  reactions?: Reactions;
}

/** What a feed's URL names: an archive of records (`.zip`), or a folder with `modified_id.csv` and `<id>.json` records. */
export function feedKind(url: URL): "zip" | "folder" {
  return url.pathname.toLowerCase().endsWith(".zip") ? "zip" : "folder";
}

/** The backoff after `failures` failures in a row: 30 s, doubling, at most `intervalMs`. */
export function retryDelayMs(failures: number, intervalMs: number): number {
  return Math.min(intervalMs, FIRST_RETRY_MS * 2 ** Math.min(Math.max(failures - 1, 0), 20));
}

/** The feed's content is broken as a whole: nothing of it is imported. */
class CorruptFeedError extends Error {}

/**
 * Reads every record of `path` (an archive or a folder) once without writing anything, and throws
 * CorruptFeedError when one cannot be read at all: the archive is not a zip, its directory or an
 * entry's data is corrupt or cut short, an entry's name is unsafe. A record that reads but is
 * refused (not JSON, not OSV, invalid, too large) is not corruption: the import counts it as
 * rejected and skips it, as `advisories import` does.
 */
async function verifyFeed(path: string, url: string): Promise<void> {
  for await (const entry of readOsvFeed([path])) {
    const error = entry.error;
    if (error instanceof OsvFeedError || (error && (error.kind === "unreadable" || error.kind === "unsafe-name"))) {
      throw new CorruptFeedError(`${url}${error.message.slice(error.message.startsWith(path) ? path.length : 0)}`);
    }
  }
}

function conditionalHeaders(row: FeedState | undefined): Record<string, string> {
  const headers: Record<string, string> = {};
  if (row?.etag) headers["if-none-match"] = row.etag;
  if (row?.last_modified) headers["if-modified-since"] = row.last_modified;
  return headers;
}

const header = (value: string | string[] | undefined) => (Array.isArray(value) ? value[0] : value) ?? "";

/**
 * Syncs one advisory feed into `db`, once, if this caller takes its lease (`takeFeedLease`): a
 * conditional GET with the validators of its last import (a 304 changes nothing); a new answer is
 * downloaded to a temporary folder (size-capped, streamed to disk, within the policy's deadline and
 * rate floor), verified whole (`verifyFeed`), and only then imported by `importOsvFeed` (a later
 * `modified` replaces, the same record again changes nothing, withdrawn records are stored as
 * withdrawn, images naming changed packages are matched again). A folder feed reads
 * `modified_id.csv` as a stream down to the newest `modified` of its last import, within
 * readModifiedIds' bounds, and fetches only the records newer than the stored ones
 * (`fetchNewerRecords`). The feed's row then gets the new validators, cursor and counts, and is due
 * again after `intervalMs`; after a failure (nothing written) it keeps its validators and is due
 * after the backoff. The temporary folder is removed whatever the end (`feed-downloads.ts`). Never
 * throws for the feed's own failures: they are the report's.
 */
export async function syncAdvisoryFeed(db: Kysely<Database>, url: string, options: FeedSyncOptions): Promise<FeedSyncReport> {
  const now = options.now ?? Date.now;
  const started = now();
  const row = await takeFeedLease(db, url, options.holder, started, options.leaseMs, options.force);
  if (!row) return { feed: url, ms: 0, result: "skipped" };

  const lease = keepLease(db, feedLease(url), options.holder, options.leaseMs, now);
  const stopped = new AbortController();
  const stop = () => stopped.abort();
  for (const signal of [lease.lost, options.signal]) signal?.addEventListener("abort", stop, { once: true });
  let dir: string | undefined;
  const attempt = { last_attempt_time: started };
  try {
    dir = await createDownloadDir();
    const outcome = await fetchAndImport(db, new URL(url), row, dir, { ...options, signal: stopped.signal });
    const done = now();
    const success = { ...attempt, last_success_time: done, failures: 0, last_error: "", next_attempt_time: done + options.intervalMs };
    if (outcome === "not-modified") {
      await finishFeedSync(db, url, options.holder, success);
      return { feed: url, ms: done - started, result: "not-modified" };
    }
    const { counts, ...state } = outcome;
    await finishFeedSync(db, url, options.holder, {
      ...success,
      ...state,
      records_read: counts.read,
      records_added: counts.added,
      records_updated: counts.updated,
      records_unchanged: counts.unchanged,
      records_rejected: counts.rejected,
    });
    return { feed: url, ms: done - started, result: "imported", counts };
  } catch (error) {
    const done = now();
    if (options.signal?.aborted) {
      // Stopped (the server closing): not the feed's failure; the lease is given back, the feed stays due.
      await finishFeedSync(db, url, options.holder, attempt).catch(() => false);
      return { feed: url, ms: done - started, result: "failed", error: "stopped before the sync ended", failures: row.failures };
    }
    const failures = row.failures + 1;
    const message = lease.lost.aborted ? "the lease was lost to another process" : (error as Error).message;
    await finishFeedSync(db, url, options.holder, { ...attempt, failures, last_error: message.slice(0, 1000), next_attempt_time: done + retryDelayMs(failures, options.intervalMs) }).catch(() => false);
    return { feed: url, ms: done - started, result: "failed", error: message, failures };
  } finally {
    lease.stop();
    for (const signal of [lease.lost, options.signal]) signal?.removeEventListener("abort", stop);
    if (dir !== undefined) await removeDownloadDir(dir);
  }
}

type Fetched = "not-modified" | (Pick<FeedOutcome, "etag" | "last_modified" | "cursor"> & { counts: ImportCounts });

async function fetchAndImport(db: Kysely<Database>, url: URL, row: FeedState, dir: string, options: FeedSyncOptions & { signal: AbortSignal }): Promise<Fetched> {
  const kind = feedKind(url);
  const index = kind === "zip" ? url : new URL("modified_id.csv", url.href.endsWith("/") ? url : new URL(`${url.href}/`));
  const indexPath = join(dir, kind === "zip" ? "feed.zip" : "modified_id.csv");
  const answer = await outboundDownload(index, conditionalHeaders(row), indexPath, options.policy, options.signal);
  if (answer.status === 304) return "not-modified";
  if (answer.status !== 200) throw new Error(`${index.href} answered HTTP ${answer.status}${answer.status >= 300 && answer.status < 400 ? " (redirects are not followed)" : ""}`);
  const validators = { etag: header(answer.headers.etag), last_modified: header(answer.headers["last-modified"]) };
  if (kind === "zip") {
    await verifyFeed(indexPath, index.href);
    return { ...validators, cursor: "", counts: await importOsvFeed(db, readOsvFeed([indexPath]), { onRejected: options.onRejected, reactions: options.reactions }) };
  }
  const records = join(dir, "records");
  await mkdir(records);
  const newest = await fetchNewerRecords(db, index, indexPath, row.cursor || undefined, records, options);
  await verifyFeed(records, index.href.replace(/\/modified_id\.csv$/, ""));
  return { ...validators, cursor: newest ?? row.cursor, counts: await importOsvFeed(db, readOsvFeed([records]), { onRejected: options.onRejected, reactions: options.reactions }) };
}
