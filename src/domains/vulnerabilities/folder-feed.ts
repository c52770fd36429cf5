// The records of a folder feed in osv.dev's layout that a sync fetches: those `modified_id.csv`
// lists as newer than the feed's cursor and than the stored record.

import { access } from "node:fs/promises";
import { join } from "node:path";
import type { Kysely } from "kysely";
import { readModifiedIds, type ModifiedId } from "../../engines/advisories/osv/modified-ids.js";
import { OSV_LIMITS } from "../../engines/advisories/osv/record.js";
import { compareOsvInstants, compareOsvTimes } from "../../engines/advisories/osv/time.js";
import { outboundDownload, type OutboundPolicy } from "../../outbound/fetch.js";
import type { Database } from "../kit/schema.js";
import { storedModified } from "./store/osv-records.js";

/** Records of a folder feed fetched at once. */
const RECORD_FETCHES = 4;
/** Lines of the index compared with the store at once (one `storedModified` query). */
const LINES_PER_BATCH = 500;

export interface FolderFetchOptions {
  /** Where records may be fetched from, and each download's deadline, rate floor and size cap. */
  policy: OutboundPolicy;
  /** Stops the fetches and the reading of the index (the server closing, the lease lost). */
  signal: AbortSignal;
}

/**
 * Reads the downloaded index `csv` (of `index`, the URL named in errors) down to `cursor` (the whole
 * file when undefined) twice, as a stream: first to check every line and find the newest `modified`
 * (readModifiedIds' bounds: a line too long, too many lines, a malformed line fail here, before
 * anything is fetched), then in batches of LINES_PER_BATCH compared with the store, fetching into
 * `dir` each listed record the store lacks or holds older (`<id>.json`, once per id however often
 * it is listed). Memory holds one batch, whatever the index's size. Returns the newest `modified`
 * listed (undefined when none is newer than the cursor). Throws OsvFeedError for the index, and the
 * first failed fetch (any answer but 200 fails the whole sync).
 */
export async function fetchNewerRecords(db: Kysely<Database>, index: URL, csv: string, cursor: string | undefined, dir: string, options: FolderFetchOptions): Promise<string | undefined> {
  let newest: ModifiedId | undefined;
  for await (const lines of readModifiedIds(csv, index.href, cursor)) {
    options.signal.throwIfAborted();
    for (const line of lines) if (newest === undefined || compareOsvInstants(line.instant, newest.instant) > 0) newest = line;
  }
  if (newest === undefined) return undefined;

  // One entry per id: its latest `modified` in the batch (the file should list each id once).
  let batch = new Map<string, ModifiedId>();
  const flush = async () => {
    options.signal.throwIfAborted();
    const listed = batch;
    batch = new Map();
    const stored = await storedModified(db, [...listed.keys()]);
    const wanted: string[] = [];
    for (const [id, line] of listed) {
      const have = stored.get(id);
      if (have === undefined || compareOsvTimes(line.modified, have) > 0) wanted.push(id);
    }
    await fetchRecords(index, wanted, dir, options);
  };
  for await (const lines of readModifiedIds(csv, index.href, cursor)) {
    for (const line of lines) {
      const seen = batch.get(line.id);
      if (seen === undefined || compareOsvInstants(line.instant, seen.instant) > 0) batch.set(line.id, line);
      if (batch.size >= LINES_PER_BATCH) await flush();
    }
  }
  if (batch.size > 0) await flush();
  return newest.modified;
}

const exists = (path: string) => access(path).then(
  () => true,
  () => false,
);

/**
 * Downloads `<folder>/<id>.json` of each id of `wanted` into `dir` (skipping those fetched already), a
 * few at once. Any answer but 200 fails: the downloads in progress are stopped, and the first
 * failure is thrown once every fetch has ended (nothing is left writing into `dir`).
 */
async function fetchRecords(index: URL, wanted: readonly string[], dir: string, options: FolderFetchOptions): Promise<void> {
  const policy = { ...options.policy, maxBytes: Math.min(options.policy.maxBytes, OSV_LIMITS.recordBytes) };
  const failed = new AbortController();
  const signal = AbortSignal.any([options.signal, failed.signal]);
  let next = 0;
  async function fetcher() {
    while (next < wanted.length && !signal.aborted) {
      const id = wanted[next++];
      const path = join(dir, `${id}.json`);
      if (await exists(path)) continue;
      const url = new URL(`./${encodeURIComponent(id)}.json`, index);
      const answer = await outboundDownload(url, { accept: "application/json" }, path, policy, signal);
      if (answer.status !== 200) throw new Error(`${url.href} answered HTTP ${answer.status}`);
    }
  }
  let failure: { error: unknown } | undefined;
  await Promise.all(
    Array.from({ length: Math.min(RECORD_FETCHES, wanted.length) }, () =>
      fetcher().catch((error: unknown) => {
        failure ??= { error };
        failed.abort();
      }),
    ),
  );
  if (failure) throw failure.error;
  options.signal.throwIfAborted();
}
