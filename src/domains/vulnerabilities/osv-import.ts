import type { Kysely } from "kysely";
import type { OsvFeedError, OsvRecordError } from "../../advisories/osv/errors.js";
import type { FeedEntry } from "../../advisories/osv/feed.js";
import { compareOsvTimes } from "../../advisories/osv/time.js";
import type { Database } from "../../store/tables.js";
import { inTransaction } from "../../store/transaction.js";
import { recordRows, type RecordRows } from "./advisory-rows.js";
import { storedModified, writeRecords } from "./store/osv-records.js";

/** What an import did; `read` = `added` + `updated` + `unchanged` + `rejected`. */
export interface ImportCounts {
  read: number;
  added: number;
  updated: number;
  unchanged: number;
  rejected: number;
}

export interface OsvImportOptions {
  /** A refused record (or a folder or archive failing part way) stops the import: StrictImportError. */
  strict?: boolean;
  /** Records per transaction (default 500). */
  batchRecords?: number;
  /** JSON bytes per transaction (default 32 MiB): a batch of large records commits early. */
  batchBytes?: number;
  /** Each refused record or failing input, as it is met. */
  onRejected?: (error: OsvRecordError | OsvFeedError) => void;
  /** After each entry read and each batch committed. */
  onProgress?: (counts: Readonly<ImportCounts>) => void;
}

/** `--strict` met a refused record: the batch in progress was not written; earlier batches stand. */
export class StrictImportError extends Error {
  override readonly name = "StrictImportError";

  constructor(
    readonly rejected: OsvRecordError | OsvFeedError,
    readonly counts: ImportCounts,
  ) {
    super(rejected.message);
  }
}

interface Pending {
  record: RecordRows;
  modified: string;
}

/**
 * Stores the records of an OSV feed, batch by batch, each batch in one transaction (a crash
 * leaves whole records only). A record not stored yet is added; one with a later `modified` than
 * the stored one replaces it with all its rows; an earlier or equal `modified` leaves it unchanged,
 * so importing the same feed twice changes nothing. Records repeated in a feed are taken in order,
 * as if imported one by one. Memory holds one batch.
 */
export async function importOsvFeed(db: Kysely<Database>, entries: AsyncIterable<FeedEntry>, options: OsvImportOptions = {}): Promise<ImportCounts> {
  const batchRecords = options.batchRecords ?? 500;
  const batchBytes = options.batchBytes ?? 32 * 1024 * 1024;
  const counts: ImportCounts = { read: 0, added: 0, updated: 0, unchanged: 0, rejected: 0 };
  let batch: Pending[] = [];
  let bytes = 0;

  const flush = async () => {
    if (batch.length === 0) return;
    const pending = batch;
    batch = [];
    bytes = 0;
    const outcome = await inTransaction(db, undefined, async (trx) => {
      const stored = await storedModified(trx, [...new Set(pending.map((p) => p.record.record.uid))]);
      const latest = new Map(stored);
      const writes = new Map<string, RecordRows>();
      const tally = { added: 0, updated: 0, unchanged: 0 };
      for (const { record, modified } of pending) {
        const id = record.record.uid;
        const previous = latest.get(id);
        if (previous !== undefined && compareOsvTimes(modified, previous) <= 0) {
          tally.unchanged++;
          continue;
        }
        if (previous === undefined) tally.added++;
        else tally.updated++;
        latest.set(id, modified);
        writes.set(id, record);
      }
      await writeRecords(trx, [...writes.values()], [...writes.keys()].filter((id) => stored.has(id)));
      return tally;
    });
    counts.added += outcome.added;
    counts.updated += outcome.updated;
    counts.unchanged += outcome.unchanged;
    options.onProgress?.(counts);
  };

  for await (const entry of entries) {
    counts.read++;
    if (entry.error) {
      counts.rejected++;
      options.onRejected?.(entry.error);
      if (options.strict) throw new StrictImportError(entry.error, { ...counts });
    } else if (entry.record) {
      const record = recordRows(entry.record);
      batch.push({ record, modified: entry.record.modified });
      bytes += record.record.document.length;
      if (batch.length >= batchRecords || bytes >= batchBytes) await flush();
    }
    options.onProgress?.(counts);
  }
  await flush();
  return counts;
}
