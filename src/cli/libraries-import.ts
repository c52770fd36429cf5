import { importLibraries } from "../domains/libraries/index.js";
import { isOrganization } from "../domains/libraries/index.js";
import { findOrganizationByName } from "../domains/iam/index.js";
import { isUidp } from "../aip/uidp.js";
import { LibraryFeedError, readLibraryFeed } from "../engines/package-feeds/feed.js";
import { StrictImportError } from "../store/batched-import.js";
import type { Store } from "../domains/open-store.js";
import { runImportCommand } from "./import-progress.js";

/** The organization an import goes to, by uid or name; throws LibraryFeedError when there is none. */
async function organizationOf(store: Store, org: string): Promise<string> {
  if (isUidp(org)) {
    if (await isOrganization(store.db, org)) return org;
    throw new LibraryFeedError(`--org ${org}: no such organization (a root group)`);
  }
  const found = await findOrganizationByName(store.db, org);
  if (!found) throw new LibraryFeedError(`--org ${org}: no organization has this name`);
  return found.uid;
}

/**
 * `platform-api libraries import`: reads the npm, PyPI and Maven metadata of `paths` (see
 * readLibraryFeed) and stores it in the organization's library index (see importLibraries). Refused
 * files are reported on stderr; the summary goes to stdout. Returns the exit status: 0, or 1 when
 * `strict` stopped at a refused file.
 * Throws LibraryFeedError, before anything is written, for an unknown organization or a path
 * that is missing or not a metadata file or a folder.
 */
export async function importLibraryDocuments(store: Store, org: string, paths: string[], strict: boolean): Promise<number> {
  const orgUid = await organizationOf(store, org);
  const feed = readLibraryFeed(paths);
  const first = await feed.next();
  async function* entries() {
    if (first.done) return;
    yield first.value;
    yield* feed;
  }
  return runImportCommand("documents", (hooks) => importLibraries(store.db, orgUid, entries(), { strict, ...hooks }), (e): e is StrictImportError => e instanceof StrictImportError);
}
