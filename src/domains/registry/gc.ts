import type { Kysely } from "kysely";
import type { Database } from "../kit/schema.js";
import { inTransaction } from "../../store/transaction.js";
import type { ContentStore } from "./content/content-store.js";
import { InvalidManifest, parseManifest, referencedDigests } from "./manifest.js";
import { deleteStaleBlob, deleteStaleUploads, staleBlobs } from "./store/blobs.js";
import { manifestPage } from "./store/manifests.js";

/**
 * Housekeeping of the registry's storage (docs/decisions.md, "Registry host"): abandoned
 * uploads expire, and blobs no manifest names are collected once a grace period has passed
 * since a push last used them.
 */

import { UPLOAD_LIFETIME_MS } from "./upload-lifetime.js";

export { UPLOAD_LIFETIME_MS };
/** A blob no manifest names is kept for a day after a push last used it (uploaded, mounted, named by a manifest it stored). */
export const DEFAULT_GC_GRACE_MS = 24 * 3600 * 1000;
const PAGE = 500;

/** Removes uploads started before `before` (epoch ms): their rows, then their files and any other stale upload file. Returns how many rows. */
export async function expireUploads(db: Kysely<Database>, content: ContentStore, before: number): Promise<number> {
  const ids = await deleteStaleUploads(db, before);
  for (const id of ids) await content.removeUpload(id);
  await content.removeStaleUploads(before);
  return ids.length;
}

export interface GcResult {
  /** Abandoned uploads removed. */
  uploads: number;
  /** Blobs removed, and their bytes. */
  blobs: number;
  bytes: number;
  /** Blobs kept although no manifest names them, as they were used within the grace period. */
  recent: number;
}

/** Every blob digest some manifest of some repo names (an image's config and layers). */
async function referencedBlobs(db: Kysely<Database>): Promise<Set<string>> {
  const referenced = new Set<string>();
  let after: { repo_uid: string; digest: string } | undefined;
  for (;;) {
    const rows = await manifestPage(db, PAGE, after);
    for (const row of rows) {
      try {
        const named = referencedDigests(parseManifest(row.content, row.media_type));
        for (const digest of [...named.blobs, ...named.external]) referenced.add(digest);
      } catch (error) {
        if (error instanceof InvalidManifest) throw new Error(`stored manifest ${row.digest} of repo ${row.repo_uid} does not parse (${error.message}); nothing was collected`);
        throw error;
      }
    }
    if (rows.length < PAGE) return referenced;
    after = rows[rows.length - 1];
  }
}

/**
 * Expires abandoned uploads, then deletes the blobs (rows, repo links and files) that no
 * manifest names and that no push has used since `now - graceMs`. Safe beside a running
 * registry: each deletion re-checks, in its own transaction, that the blob is still unused,
 * and every push marks a blob used before relying on it (see `touchBlobs`).
 */
export async function collectGarbage(db: Kysely<Database>, content: ContentStore, options: { now: number; graceMs?: number }): Promise<GcResult> {
  const uploads = await expireUploads(db, content, options.now - UPLOAD_LIFETIME_MS);
  const before = options.now - (options.graceMs ?? DEFAULT_GC_GRACE_MS);
  // Referenced first: a manifest stored after this scan marks its blobs used, so they are no longer stale.
  const referenced = await referencedBlobs(db);
  const result: GcResult = { uploads, blobs: 0, bytes: 0, recent: 0 };
  let after = "";
  for (;;) {
    const page = await staleBlobs(db, before, PAGE, after);
    for (const { digest, size } of page) {
      if (referenced.has(digest)) continue;
      // The file goes inside the transaction, while the row is locked: a push of the same digest waits, then publishes it anew.
      const deleted = await inTransaction(db, undefined, async (trx) => {
        if (!(await deleteStaleBlob(trx, digest, before))) return false;
        await content.remove(digest);
        return true;
      });
      if (deleted) {
        result.blobs++;
        result.bytes += size;
      }
    }
    if (page.length < PAGE) break;
    after = page[page.length - 1].digest;
  }
  result.recent = await countRecentUnreferenced(db, before, referenced);
  return result;
}

async function countRecentUnreferenced(db: Kysely<Database>, before: number, referenced: Set<string>): Promise<number> {
  const rows = await db.selectFrom("blobs").select("digest").where("use_time", ">=", before).execute();
  return rows.filter((r) => !referenced.has(r.digest)).length;
}
