import type { Selectable } from "kysely";
import type { Db, ManifestTable } from "../tables.js";

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
  const row = await db.selectFrom("manifests").selectAll().where("repo_uid", "=", repoUid).where("digest", "=", digest).executeTakeFirst();
  return row && normalized(row);
}

/** The manifests of a repo among `digests` that it stores. */
export async function existingManifests(db: Db, repoUid: string, digests: string[]): Promise<Set<string>> {
  if (digests.length === 0) return new Set();
  const rows = await db.selectFrom("manifests").select("digest").where("repo_uid", "=", repoUid).where("digest", "in", digests).execute();
  return new Set(rows.map((r) => r.digest));
}
