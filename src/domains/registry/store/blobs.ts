import type { Selectable } from "kysely";
import type { Db } from "../../kit/schema.js";
import type { UploadTable } from "../tables.js";

export type UploadRow = Selectable<UploadTable>;

/** Records that the content store holds blob `digest` whole, used `now`. Idempotent (a known blob is only marked used). */
export async function recordBlob(db: Db, digest: string, size: number, now: number): Promise<void> {
  await db
    .insertInto("blobs")
    .values({ digest, size, create_time: now, use_time: now })
    .onConflict((oc) => oc.column("digest").doUpdateSet({ use_time: now }))
    .execute();
}

/**
 * Marks those of `digests` that are recorded as used `now`, so that garbage collection
 * spares them; returns how many were. A push marks a blob before it relies on it: on
 * PostgreSQL this waits for a collection deleting it, and then finds it gone.
 */
export async function touchBlobs(db: Db, digests: string[], now: number): Promise<number> {
  const unique = [...new Set(digests)];
  if (unique.length === 0) return 0;
  const result = await db.updateTable("blobs").set({ use_time: now }).where("digest", "in", unique).executeTakeFirst();
  return Number(result.numUpdatedRows);
}

/** Up to `limit` digests of blobs last used before `before` (epoch ms), after `after` in digest order. */
export async function staleBlobs(db: Db, before: number, limit: number, after = ""): Promise<Array<{ digest: string; size: number }>> {
  const rows = await db
    .selectFrom("blobs")
    .select(["digest", "size"])
    .where("use_time", "<", before)
    .where("digest", ">", after)
    .orderBy("digest")
    .limit(limit)
    .execute();
  return rows.map((r) => ({ digest: r.digest, size: Number(r.size) }));
}

/**
 * In a transaction: when blob `digest` was still last used before `before`, locks it, unlinks
 * it from every repo and forgets it; returns whether it did. A push marking the blob used
 * (touchBlobs, recordBlob) meanwhile either came first (the blob stays) or waits for this
 * transaction and then finds the blob gone.
 */
export async function deleteStaleBlob(trx: Db, digest: string, before: number): Promise<boolean> {
  const claimed = await trx.updateTable("blobs").set((eb) => ({ use_time: eb.ref("use_time") })).where("digest", "=", digest).where("use_time", "<", before).executeTakeFirst();
  if (Number(claimed.numUpdatedRows) === 0) return false;
  await trx.deleteFrom("repo_blobs").where("digest", "=", digest).execute();
  await trx.deleteFrom("blobs").where("digest", "=", digest).execute();
  return true;
}

/** Lets repo `repoUid` serve blob `digest` (which must be recorded). Idempotent. */
export async function linkBlob(db: Db, repoUid: string, digest: string): Promise<void> {
  await db.insertInto("repo_blobs").values({ repo_uid: repoUid, digest }).onConflict((oc) => oc.columns(["repo_uid", "digest"]).doNothing()).execute();
}

/** Stops repo `repoUid` serving blob `digest`; false when it did not. The blob itself goes when a collection finds nothing naming it. */
export async function unlinkBlob(db: Db, repoUid: string, digest: string): Promise<boolean> {
  const result = await db.deleteFrom("repo_blobs").where("repo_uid", "=", repoUid).where("digest", "=", digest).executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}

/** The size of blob `digest` when repo `repoUid` may serve it, else undefined. */
export async function linkedBlobSize(db: Db, repoUid: string, digest: string): Promise<number | undefined> {
  const row = await db
    .selectFrom("repo_blobs")
    .innerJoin("blobs", "blobs.digest", "repo_blobs.digest")
    .select("blobs.size")
    .where("repo_blobs.repo_uid", "=", repoUid)
    .where("repo_blobs.digest", "=", digest)
    .executeTakeFirst();
  return row === undefined ? undefined : Number(row.size);
}

/** Those of `digests` that repo `repoUid` may not serve. */
export async function unlinkedBlobs(db: Db, repoUid: string, digests: string[]): Promise<string[]> {
  const unique = [...new Set(digests)];
  if (unique.length === 0) return [];
  const rows = await db.selectFrom("repo_blobs").select("digest").where("repo_uid", "=", repoUid).where("digest", "in", unique).execute();
  const linked = new Set(rows.map((r) => r.digest));
  return unique.filter((d) => !linked.has(d));
}

/** The stored sizes of those of `digests` the content store holds. */
export async function blobSizes(db: Db, digests: string[]): Promise<Map<string, number>> {
  const unique = [...new Set(digests)];
  if (unique.length === 0) return new Map();
  const rows = await db.selectFrom("blobs").select(["digest", "size"]).where("digest", "in", unique).execute();
  return new Map(rows.map((r) => [r.digest, Number(r.size)]));
}

export async function insertUpload(db: Db, row: UploadRow): Promise<void> {
  await db.insertInto("uploads").values(row).execute();
}

/** The upload `id` of repo `repoUid`, or undefined. */
export async function findUpload(db: Db, repoUid: string, id: string): Promise<UploadRow | undefined> {
  return db.selectFrom("uploads").selectAll().where("id", "=", id).where("repo_uid", "=", repoUid).executeTakeFirst();
}

export async function deleteUpload(db: Db, id: string): Promise<void> {
  await db.deleteFrom("uploads").where("id", "=", id).execute();
}

/** Removes uploads started before `before` (epoch ms); returns their ids. */
export async function deleteStaleUploads(db: Db, before: number): Promise<string[]> {
  const rows = await db.deleteFrom("uploads").where("create_time", "<", before).returning("id").execute();
  return rows.map((r) => r.id);
}
