import { readOsvFeed } from "../engines/advisories/osv/feed.js";
import { importOsvFeed } from "../domains/vulnerabilities/index.js";
import { StrictImportError } from "../store/batched-import.js";
import type { Store } from "../domains/open-store.js";
import { runImportCommand } from "./import-progress.js";

/**
 * `platform-api advisories import`: reads OSV records from `paths` and stores them (see
 * importOsvFeed). Refused records are reported on stderr with their file and JSON path; the
 * summary goes to stdout. Returns the exit status: 0, or 1 when `strict` stopped at a refused record.
 * Throws OsvFeedError, before anything is read, for a path that is not a .json file, a .zip file or a directory.
 */
export async function importAdvisories(store: Store, paths: string[], strict: boolean): Promise<number> {
  const feed = readOsvFeed(paths);
  // The first step checks every path: a mistyped one fails here, before anything is written.
  const first = await feed.next();
  async function* entries() {
    if (first.done) return;
    yield first.value;
    yield* feed;
  }
  return runImportCommand("records", (hooks) => importOsvFeed(store.db, entries(), { strict, ...hooks }), (e): e is StrictImportError => e instanceof StrictImportError);
}
