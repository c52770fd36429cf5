import type { Kysely } from "kysely";
import type { LibraryDocumentError, LibraryPackage } from "../../engines/package-feeds/library-package.js";
import { runBatchedImport, type BatchedImportOptions, type BatchOutcome, type ImportCounts, type ImportEntry } from "../../store/batched-import.js";
import type { Database } from "../kit/schema.js";
import { inTransaction } from "../../store/transaction.js";
import { artifactRows, type ArtifactRows } from "./artifact-rows.js";
import { storedArtifacts, writeArtifacts } from "./store/artifacts.js";

/**
 * Stores packages in organization `org`'s library index, batch by batch, each batch in one
 * transaction. A package not stored yet is added; one whose metadata differs from the stored one
 * replaces it with all its versions (its create time stays); the same metadata leaves it
 * unchanged, so importing the same documents twice changes nothing. A package repeated in a feed
 * is taken in order, as if imported one by one.
 */
export async function importLibraries(
  db: Kysely<Database>,
  org: string,
  entries: AsyncIterable<ImportEntry<LibraryPackage, LibraryDocumentError>>,
  options: BatchedImportOptions<LibraryDocumentError> & { now?: () => number } = {},
): Promise<ImportCounts> {
  const now = options.now ?? Date.now;
  async function* rows(): AsyncIterable<ImportEntry<ArtifactRows, LibraryDocumentError>> {
    for await (const entry of entries) yield entry.item ? { item: artifactRows(org, entry.item) } : { error: entry.error };
  }
  return runBatchedImport(db, rows(), { write: (batch) => writeBatch(db, batch, now()), sizeOf: (r) => 200 + r.versions.length * 120 }, options);
}

function writeBatch(db: Kysely<Database>, batch: ArtifactRows[], time: number): Promise<BatchOutcome> {
  return inTransaction(db, undefined, async (trx) => {
    const stored = await storedArtifacts(trx, [...new Set(batch.map((r) => r.artifact.uid))]);
    const latest = new Map(stored);
    const writes = new Map<string, { rows: ArtifactRows; createTime: number; updateTime: number; replace: boolean }>();
    const tally = { added: 0, updated: 0, unchanged: 0 };
    for (const rows of batch) {
      const uid = rows.artifact.uid;
      const previous = latest.get(uid);
      if (previous?.digest === rows.artifact.digest) {
        tally.unchanged++;
        continue;
      }
      if (previous === undefined) tally.added++;
      else tally.updated++;
      const createTime = previous?.create_time ?? time;
      latest.set(uid, { digest: rows.artifact.digest, create_time: createTime });
      writes.set(uid, { rows, createTime, updateTime: time, replace: stored.has(uid) });
    }
    await writeArtifacts(trx, [...writes.values()]);
    return tally;
  });
}
