import type { Selectable } from "kysely";
import type { Db } from "../../kit/schema.js";
import type { ManifestTable } from "../tables.js";
import { CACHEABLE } from "../../../store/cached-reads.js";
import { runPrecompiled } from "../../../store/precompiled.js";
import { refuseImmutableTagChange } from "../immutable-tags.js";

export type ManifestRow = Selectable<ManifestTable>;

function normalized(row: ManifestRow): ManifestRow {
  // bigint columns come back as strings from some drivers; content as a Buffer on both.
  return { ...row, size: Number(row.size), image_size: Number(row.image_size), create_time: Number(row.create_time), content: Buffer.from(row.content) };
}

/**
 * Stores a manifest of a repo. A manifest is named by its digest, so storing the same
 * digest again changes nothing. Returns whether a row was written.
 */
export async function putManifest(db: Db, row: ManifestRow): Promise<boolean> {
  const result = await db
    .insertInto("manifests")
    .values(row)
    .onConflict((oc) => oc.columns(["repo_uid", "digest"]).doNothing())
    .executeTakeFirst();
  return Number(result.numInsertedOrUpdatedRows ?? 0) > 0;
}

/** The manifest `digest` of a repo, or undefined. */
export async function findManifest(db: Db, repoUid: string, digest: string): Promise<ManifestRow | undefined> {
  const [row] = await runPrecompiled(db, "manifest by digest", [repoUid, digest], (repo, manifest) =>
    db.selectFrom("manifests").selectAll().where("repo_uid", "=", repo).where("digest", "=", manifest).modifyEnd(CACHEABLE),
  );
  return row && normalized(row);
}

/** The manifests of a repo among `digests` that it stores. */
export async function existingManifests(db: Db, repoUid: string, digests: string[]): Promise<Set<string>> {
  if (digests.length === 0) return new Set();
  const rows = await db.selectFrom("manifests").select("digest").where("repo_uid", "=", repoUid).where("digest", "in", digests).execute();
  return new Set(rows.map((r) => r.digest));
}

/** Records the manifests index `parent` names. Idempotent. */
export async function putManifestRefs(db: Db, repoUid: string, parent: string, children: string[]): Promise<void> {
  const unique = [...new Set(children)];
  if (unique.length === 0) return;
  await db
    .insertInto("manifest_refs")
    .values(unique.map((child) => ({ repo_uid: repoUid, parent_digest: parent, child_digest: child })))
    .onConflict((oc) => oc.columns(["repo_uid", "parent_digest", "child_digest"]).doNothing())
    .execute();
}

/**
 * Deletes manifest `digest` of a repo and the tags pointing to it (their history stays).
 * Returns false when the repo does not hold it. Throws TagImmutableError (immutable-tags.ts)
 * when one of those tags matches an immutable pattern of the repo (then, in a transaction,
 * nothing is deleted).
 */
export async function deleteManifest(db: Db, repoUid: string, digest: string): Promise<boolean> {
  const result = await db.deleteFrom("manifests").where("repo_uid", "=", repoUid).where("digest", "=", digest).executeTakeFirst();
  if (Number(result.numDeletedRows) === 0) return false;
  await db.deleteFrom("manifest_refs").where("repo_uid", "=", repoUid).where("parent_digest", "=", digest).execute();
  const tags = await db.deleteFrom("tags").where("repo_uid", "=", repoUid).where("digest", "=", digest).returning(["uid", "name", "digest"]).execute();
  await refuseImmutableTagChange(db, repoUid, tags, { kind: "delete-manifest", digest });
  return true;
}

/** Manifests of a repo whose subject is `subject`, optionally of one artifact type, by digest. */
export async function listReferrers(db: Db, repoUid: string, subject: string, artifactType?: string): Promise<ManifestRow[]> {
  let query = db.selectFrom("manifests").selectAll().where("repo_uid", "=", repoUid).where("subject_digest", "=", subject);
  if (artifactType !== undefined) query = query.where("artifact_type", "=", artifactType);
  const rows = await query.orderBy("digest").limit(10_000).execute();
  return rows.map(normalized);
}

/**
 * True when `digest` is, or is named by an index that is, a digest one of `tags` of the
 * repo has pointed to (its tag history): what a token limited to those tags may pull.
 */
export async function reachableFromTags(db: Db, repoUid: string, digest: string, tags: string[]): Promise<boolean> {
  if (tags.length === 0) return false;
  const direct = await db
    .selectFrom("tag_history")
    .select("seq")
    .where("repo_uid", "=", repoUid)
    .where("tag_name", "in", tags)
    .where("digest", "=", digest)
    .limit(1)
    .executeTakeFirst();
  if (direct) return true;
  const viaIndex = await db
    .selectFrom("manifest_refs")
    .innerJoin("tag_history", (join) =>
      join.onRef("tag_history.repo_uid", "=", "manifest_refs.repo_uid").onRef("tag_history.digest", "=", "manifest_refs.parent_digest"),
    )
    .select("manifest_refs.child_digest")
    .where("manifest_refs.repo_uid", "=", repoUid)
    .where("manifest_refs.child_digest", "=", digest)
    .where("tag_history.tag_name", "in", tags)
    .limit(1)
    .executeTakeFirst();
  return viaIndex !== undefined;
}

/** Up to `limit` manifests of every repo, in (repo, digest) order after `after`: what garbage collection reads. */
export async function manifestPage(
  db: Db,
  limit: number,
  after?: { repo_uid: string; digest: string },
): Promise<Array<Pick<ManifestRow, "repo_uid" | "digest" | "media_type" | "content">>> {
  let query = db.selectFrom("manifests").select(["repo_uid", "digest", "media_type", "content"]);
  if (after !== undefined) {
    query = query.where((eb) => eb.or([eb("repo_uid", ">", after.repo_uid), eb.and([eb("repo_uid", "=", after.repo_uid), eb("digest", ">", after.digest)])]));
  }
  const rows = await query.orderBy("repo_uid").orderBy("digest").limit(limit).execute();
  return rows.map((r) => ({ ...r, content: Buffer.from(r.content) }));
}
