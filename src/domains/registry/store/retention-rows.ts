import type { Db } from "../../kit/schema.js";
import type { RetentionInput } from "../retention.js";
import type { TagRow } from "./tags.js";

/** What the retention plan reads of a repo (retention.ts): its tags (active when last changed or pushed), manifests and index references. */
export async function readRetentionInput(db: Db, repoUid: string): Promise<Omit<RetentionInput, "immutableTags"> & { tags: Array<TagRow & { active_time: number }> }> {
  const [tags, manifests, refs] = await Promise.all([
    db.selectFrom("tags").selectAll().where("repo_uid", "=", repoUid).execute(),
    db.selectFrom("manifests").select(["digest", "create_time", "subject_digest"]).where("repo_uid", "=", repoUid).execute(),
    db.selectFrom("manifest_refs").select(["parent_digest", "child_digest"]).where("repo_uid", "=", repoUid).execute(),
  ]);
  return {
    tags: tags.map((t) => {
      const times = { create_time: Number(t.create_time), update_time: Number(t.update_time), push_time: Number(t.push_time) };
      return { ...t, ...times, active_time: Math.max(times.update_time, times.push_time) };
    }),
    manifests: manifests.map((m) => ({ ...m, create_time: Number(m.create_time) })),
    refs,
  };
}

/** Deletes a tag if it is as read (its digest, update and push times; its history stays); the deleted row, or undefined. */
export function deleteTagIfUnchanged(db: Db, tag: Pick<TagRow, "uid" | "digest" | "update_time" | "push_time">): Promise<TagRow | undefined> {
  return db
    .deleteFrom("tags")
    .where("uid", "=", tag.uid)
    .where("digest", "=", tag.digest)
    .where("update_time", "=", tag.update_time)
    .where("push_time", "=", tag.push_time)
    .returningAll()
    .executeTakeFirst();
}

/** Deletes manifest `digest` of a repo, and the references it makes as an index, if no tag points at it now; true when deleted. */
export async function deleteUntaggedManifest(db: Db, repoUid: string, digest: string): Promise<boolean> {
  const result = await db
    .deleteFrom("manifests")
    .where("repo_uid", "=", repoUid)
    .where("digest", "=", digest)
    .where(({ not, exists, selectFrom }) => not(exists(selectFrom("tags").select("uid").where("tags.repo_uid", "=", repoUid).where("tags.digest", "=", digest))))
    .executeTakeFirst();
  if (Number(result.numDeletedRows) === 0) return false;
  await db.deleteFrom("manifest_refs").where("repo_uid", "=", repoUid).where("parent_digest", "=", digest).execute();
  return true;
}
