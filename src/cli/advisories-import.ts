import { readOsvFeed } from "../advisories/osv/feed.js";
import { importOsvFeed, StrictImportError, type ImportCounts } from "../domains/vulnerabilities/osv-import.js";
import type { Store } from "../store/store.js";

/** The one-line summary: `read N, new N, updated N, unchanged N, rejected N`. */
export function formatCounts(c: ImportCounts): string {
  return `read ${c.read}, new ${c.added}, updated ${c.updated}, unchanged ${c.unchanged}, rejected ${c.rejected}`;
}

/** A progress line redrawn in place, at most every 100 ms; only on a terminal. */
function progressLine(stream: NodeJS.WriteStream): { update(c: ImportCounts): void; clear(): void } {
  if (!stream.isTTY) return { update() {}, clear() {} };
  const started = Date.now();
  let drawn = 0;
  return {
    update(c) {
      const now = Date.now();
      if (now - drawn < 100) return;
      drawn = now;
      const rate = Math.round(c.read / Math.max((now - started) / 1000, 0.001));
      stream.write(`\r\x1b[K${formatCounts(c)} (${rate} records/s)`);
    },
    clear() {
      if (drawn > 0) stream.write("\r\x1b[K");
    },
  };
}

/**
 * `platform-api advisories import`: reads OSV records from `paths` and stores them (see
 * importOsvFeed). Refused records are reported on stderr with their file and JSON path; the
 * summary goes to stdout. Returns the exit status: 0, or 1 when `strict` stopped at a refused record.
 * Throws OsvFeedError, before anything is read, for a path that is not a .json file, a .zip file or a directory.
 */
export async function importAdvisories(store: Store, paths: string[], strict: boolean): Promise<number> {
  const progress = progressLine(process.stderr);
  const feed = readOsvFeed(paths);
  // The first step checks every path: a mistyped one fails here, before anything is written.
  const first = await feed.next();
  async function* entries() {
    if (first.done) return;
    yield first.value;
    yield* feed;
  }
  try {
    const counts = await importOsvFeed(store.db, entries(), {
      strict,
      onRejected: (error) => {
        progress.clear();
        process.stderr.write(`rejected ${error.message}\n`);
      },
      onProgress: (c) => progress.update(c),
    });
    progress.clear();
    process.stdout.write(`${formatCounts(counts)}\n`);
    return 0;
  } catch (error) {
    progress.clear();
    if (!(error instanceof StrictImportError)) throw error;
    process.stdout.write(`${formatCounts(error.counts)}\n`);
    process.stderr.write(`platform-api: --strict: stopped at a refused record; the records of its batch were not written\n`);
    return 1;
  }
}
