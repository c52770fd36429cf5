// The loop every importer shares (advisories, libraries): entries read one by one, refused ones
// reported and counted, accepted ones written batch by batch, each batch in one transaction by
// the importer's `write`. Memory holds one batch.

import type { Kysely } from "kysely";
import { withBulkWrites } from "./bulk-writes.js";

/** What an import did; `read` = `added` + `updated` + `unchanged` + `rejected`. */
export interface ImportCounts {
  read: number;
  added: number;
  updated: number;
  unchanged: number;
  rejected: number;
}

/** What one batch's write did to its items. */
export type BatchOutcome = Pick<ImportCounts, "added" | "updated" | "unchanged">;

/** One entry read: an item to store, or why one was refused. Exactly one is set. */
export interface ImportEntry<Item, Refusal extends Error> {
  readonly item?: Item;
  readonly error?: Refusal;
}

export interface BatchedImportOptions<Refusal extends Error> {
  /** A refused entry stops the import: StrictImportError. */
  strict?: boolean;
  /** Items per transaction (default 500). */
  batchItems?: number;
  /** Bytes (as `sizeOf` counts them) per transaction (default 32 MiB): a batch of large items commits early. */
  batchBytes?: number;
  /** Each refused entry, as it is met. */
  onRejected?: (error: Refusal) => void;
  /** After each entry read and each batch committed. */
  onProgress?: (counts: Readonly<ImportCounts>) => void;
}

/** `--strict` met a refused entry: the batch in progress was not written; earlier batches stand. */
export class StrictImportError<Refusal extends Error = Error> extends Error {
  override readonly name = "StrictImportError";

  constructor(
    readonly rejected: Refusal,
    readonly counts: ImportCounts,
  ) {
    super(rejected.message);
  }
}

/** The one-line summary: `read N, new N, updated N, unchanged N, rejected N`. */
export function formatCounts(c: ImportCounts): string {
  return `read ${c.read}, new ${c.added}, updated ${c.updated}, unchanged ${c.unchanged}, rejected ${c.rejected}`;
}

/**
 * Runs an import into `db`: `write` stores one batch (in one transaction, so a crash leaves whole
 * batches) and says what it did; `sizeOf` weighs an item for `batchBytes`. The whole import runs
 * `withBulkWrites`.
 */
export async function runBatchedImport<Item, Refusal extends Error>(
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  db: Kysely<any>,
  entries: AsyncIterable<ImportEntry<Item, Refusal>>,
  handlers: { write: (batch: Item[]) => Promise<BatchOutcome>; sizeOf: (item: Item) => number },
  options: BatchedImportOptions<Refusal> = {},
): Promise<ImportCounts> {
  const batchItems = options.batchItems ?? 500;
  const batchBytes = options.batchBytes ?? 32 * 1024 * 1024;
  const counts: ImportCounts = { read: 0, added: 0, updated: 0, unchanged: 0, rejected: 0 };
  let batch: Item[] = [];
  let bytes = 0;

  const flush = async () => {
    if (batch.length === 0) return;
    const pending = batch;
    batch = [];
    bytes = 0;
    const outcome = await handlers.write(pending);
    counts.added += outcome.added;
    counts.updated += outcome.updated;
    counts.unchanged += outcome.unchanged;
    options.onProgress?.(counts);
  };

  return withBulkWrites(db, async () => {
    for await (const entry of entries) {
      counts.read++;
      if (entry.error) {
        counts.rejected++;
        options.onRejected?.(entry.error);
        if (options.strict) throw new StrictImportError(entry.error, { ...counts });
      } else if (entry.item !== undefined) {
        batch.push(entry.item);
        bytes += handlers.sizeOf(entry.item);
        if (batch.length >= batchItems || bytes >= batchBytes) await flush();
      }
      options.onProgress?.(counts);
    }
    await flush();
    return counts;
  });
}
