import type { Selectable } from "kysely";
import type { Db } from "../../kit/schema.js";
import type { TagHistoryTable } from "../tables.js";
import { recordTagMove } from "./resolved-vulns.js";
import { CACHEABLE } from "../../../store/cached-reads.js";

export type TagHistoryRow = Selectable<TagHistoryTable>;

/** The newest history record of a tag name (highest seq), or undefined. */
export async function lastTagHistory(db: Db, repoUid: string, tagName: string): Promise<TagHistoryRow | undefined> {
  return db
    .selectFrom("tag_history")
    .selectAll()
    .where("repo_uid", "=", repoUid)
    .where("tag_name", "=", tagName)
    .orderBy("seq", "desc")
    .limit(1)
    .executeTakeFirst();
}

/**
 * Appends a record (seq = last + 1) unless the tag name already points to
 * `digest` in its history. Call it in the transaction that changes the tag,
 * after the tag row was written (the row lock then serializes concurrent writers).
 * A move from another digest is also recorded for the day's resolved-vulnerability report.
 * Returns whether a record was written.
 */
export async function appendTagHistory(db: Db, repoUid: string, tagName: string, digest: string, updateTime: number): Promise<boolean> {
  const last = await lastTagHistory(db, repoUid, tagName);
  if (last?.digest === digest) return false;
  await db
    .insertInto("tag_history")
    .values({ repo_uid: repoUid, tag_name: tagName, seq: (last ? Number(last.seq) : 0) + 1, digest, update_time: updateTime })
    .execute();
  if (last) await recordTagMove(db, repoUid, tagName, last.digest, digest, updateTime);
  return true;
}

/**
 * The digests a tag name of a repo pointed to, oldest first (`update_time`,
 * then `seq`), between `start` and `end` (epoch ms, both inclusive), at most
 * `limit` records, without the columns the request names (repo, tag). The
 * history outlives the tag: a deleted tag keeps it.
 */
export async function readTagHistory(
  db: Db,
  repoUid: string,
  tagName: string,
  options: { start?: number; end?: number; limit: number },
): Promise<Array<Pick<TagHistoryRow, "seq" | "digest" | "update_time">>> {
  let q = db.selectFrom("tag_history").select(["seq", "update_time", "digest"]).where("repo_uid", "=", repoUid).where("tag_name", "=", tagName);
  if (options.start !== undefined) q = q.where("update_time", ">=", options.start);
  if (options.end !== undefined) q = q.where("update_time", "<=", options.end);
  const rows = await q.orderBy("update_time", "asc").orderBy("seq", "asc").limit(options.limit).modifyEnd(CACHEABLE).execute();
  for (const r of rows) {
    r.seq = Number(r.seq);
    r.update_time = Number(r.update_time);
  }
  return rows;
}
