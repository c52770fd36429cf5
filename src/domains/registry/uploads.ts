import type { Readable } from "node:stream";
import type { Kysely } from "kysely";
import type { Database } from "../kit/schema.js";
import { inTransaction } from "../../store/transaction.js";
import { ChunkLengthMismatch, DigestMismatch, UploadTooLarge, type ContentStore } from "./content/content-store.js";
import { RegistryError } from "./errors.js";
import type { RepositoryName } from "./names.js";
import { deleteUpload, findUpload, insertUpload, linkBlob, linkedBlobSize, recordBlob, touchBlobs, unlinkBlob } from "./store/blobs.js";

/**
 * Uploads, independent of HTTP: an upload belongs to a repo, grows by appends and becomes a blob
 * of the repo when it is finished with its digest; a blob another repo holds may be mounted
 * instead. Refusals are RegistryErrors.
 */

/** Starts an empty upload into repo `repoUid`; returns its id. */
export async function startUpload(db: Kysely<Database>, content: ContentStore, repoUid: string, now: number): Promise<string> {
  const id = await content.createUpload();
  await insertUpload(db, { id, repo_uid: repoUid, create_time: now });
  return id;
}

/** The bytes upload `id` of repo `repoUid` (named `name`) holds so far; throws BLOB_UPLOAD_UNKNOWN when it has no such upload. */
export async function uploadSize(db: Kysely<Database>, content: ContentStore, repoUid: string, name: RepositoryName, id: string): Promise<number> {
  const upload = await findUpload(db, repoUid, id);
  const size = upload === undefined ? undefined : await content.uploadSize(id);
  if (size === undefined) throw new RegistryError("BLOB_UPLOAD_UNKNOWN", `no upload ${id.slice(0, 64)} in ${name.full}`, { id: id.slice(0, 64) });
  return size;
}

/**
 * Appends `source` to upload `id`; returns its new size. Throws SIZE_INVALID past `maxBytes` and,
 * with `length`, BLOB_UPLOAD_INVALID when the chunk is not exactly that long; the upload is then
 * as it was.
 */
export async function appendUpload(content: ContentStore, id: string, source: Readable, maxBytes: number, length?: number): Promise<number> {
  try {
    return await content.append(id, source, maxBytes, length);
  } catch (error) {
    if (error instanceof UploadTooLarge) throw new RegistryError("SIZE_INVALID", error.message, { limit: maxBytes });
    if (error instanceof ChunkLengthMismatch) throw new RegistryError("BLOB_UPLOAD_INVALID", error.message, { expected: error.expected });
    throw error;
  }
}

/** Forgets upload `id`: its row and its bytes. */
export async function cancelUpload(db: Kysely<Database>, content: ContentStore, id: string): Promise<void> {
  await deleteUpload(db, id);
  await content.removeUpload(id);
}

/**
 * Turns upload `id` into blob `digest` of the repo: checked against its bytes, published
 * whole, recorded and linked in one transaction. Throws DIGEST_INVALID on a mismatch.
 */
export async function finishUpload(db: Kysely<Database>, content: ContentStore, repoUid: string, id: string, digest: string, now: number): Promise<number> {
  // Marked used before its file is published, so that a collection cannot delete a blob of
  // that digest after the file is in place (docs/decisions.md, "Registry host").
  await touchBlobs(db, [digest], now);
  let size: number;
  try {
    size = await content.commit(id, digest);
  } catch (error) {
    if (error instanceof DigestMismatch) throw new RegistryError("DIGEST_INVALID", error.message, { digest });
    throw error;
  }
  await inTransaction(db, undefined, async (trx) => {
    await recordBlob(trx, digest, size, now);
    await linkBlob(trx, repoUid, digest);
    await deleteUpload(trx, id);
  });
  return size;
}

/**
 * `DELETE` of a blob of the repo (the distribution spec's blob deletion, as distribution does it): the
 * repo no longer serves it, and its bytes go when a collection finds no repo and no manifest naming
 * them. A manifest of the repo that names it stays (its pulls of that blob then answer BLOB_UNKNOWN
 * until it is pushed again). False when the repo did not serve it.
 */
export function deleteBlob(db: Kysely<Database>, repoUid: string, digest: string): Promise<boolean> {
  return unlinkBlob(db, repoUid, digest);
}

/**
 * Links blob `digest` of repo `fromUid` into repo `toUid` (the same repo: confirms it holds
 * it), marking it used; false when `fromUid` does not hold it.
 */

export async function mountBlob(db: Kysely<Database>, fromUid: string, toUid: string, digest: string, now: number): Promise<boolean> {
  return inTransaction(db, undefined, async (trx) => {
    if ((await touchBlobs(trx, [digest], now)) === 0) return false;
    if ((await linkedBlobSize(trx, fromUid, digest)) === undefined) return false;
    if (toUid !== fromUid) await linkBlob(trx, toUid, digest);
    return true;
  });
}
