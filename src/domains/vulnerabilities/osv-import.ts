import type { Kysely } from "kysely";
import type { OsvFeedError, OsvRecordError } from "../../engines/advisories/osv/errors.js";
import type { FeedEntry } from "../../engines/advisories/osv/feed.js";
import { compareOsvTimes } from "../../engines/advisories/osv/time.js";
import { runBatchedImport, StrictImportError, type BatchedImportOptions, type BatchOutcome, type ImportCounts, type ImportEntry } from "../../store/batched-import.js";
import type { Database } from "../kit/schema.js";
import { inTransaction } from "../../store/transaction.js";
import { recordRows, type RecordRows } from "./advisory-rows.js";
import { storedModified, writeRecords } from "./store/osv-records.js";
import { NO_REACTIONS, type Reactions } from "../kit/reactions.js";

export { StrictImportError, type ImportCounts };

export interface OsvImportOptions extends BatchedImportOptions<OsvRecordError | OsvFeedError> {
  /** Records per transaction (default 500). */
  batchRecords?: number;
  /** Every domain's reactions: `advisoriesChanged` runs in each batch's transaction (default: none). */
  reactions?: Reactions;
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
  async function* pending(): AsyncIterable<ImportEntry<Pending, OsvRecordError | OsvFeedError>> {
    for await (const entry of entries) {
      if (entry.error) yield { error: entry.error };
      else if (entry.record) yield { item: { record: recordRows(entry.record), modified: entry.record.modified } };
      else yield {};
    }
  }
  return runBatchedImport(db, pending(), { write: (batch) => writeBatch(db, batch, options.reactions ?? NO_REACTIONS), sizeOf: (p) => p.record.record.document.length }, { batchItems: options.batchRecords, ...options });
}

/** One batch in one transaction: added, replaced when `modified` is later, else unchanged. */
function writeBatch(db: Kysely<Database>, pending: Pending[], reactions: Reactions): Promise<BatchOutcome> {
  return inTransaction(db, undefined, async (trx) => {
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
    const replacing = [...writes.keys()].filter((id) => stored.has(id));
    // The images naming a package of a new or changed record (before and after the change) are matched again.
    const named = [...writes.values()].flatMap((r) => r.advisories.map((a) => ({ ecosystem: a.ecosystem, name: a.artifact_name })));
    if (replacing.length > 0) named.push(...(await trx.selectFrom("advisories").select(["ecosystem", "artifact_name as name"]).where("advisory_id", "in", replacing).execute()));
    await writeRecords(trx, [...writes.values()], replacing);
    if (named.length > 0) await reactions.advisoriesChanged(trx, named, Date.now());
    return tally;
  });
}
