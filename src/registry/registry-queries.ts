import type { Selectable } from "kysely";
import type { Db, RepoTable } from "../store/tables.js";

/**
 * The registry host's own read queries. Temporary: the registry repositories in
 * `src/store/repositories/` (repos, tag history) are to replace them.
 */

/** Most history records one request returns (spec 8). */
export const HISTORY_LIMIT = 1000;

/** The organization (root group) named `organization`, or undefined. */
export async function findOrganization(db: Db, organization: string): Promise<{ uid: string } | undefined> {
  return db.selectFrom("groups").select("uid").where("parent_uid", "=", "").where("name", "=", organization).executeTakeFirst();
}

/** The repo `<organization>/<name>`, or undefined. */
export async function findRepoByPath(db: Db, organization: string, name: string): Promise<Selectable<RepoTable> | undefined> {
  return db
    .selectFrom("repos")
    .innerJoin("groups", "groups.uid", "repos.org_uid")
    .selectAll("repos")
    .where("groups.parent_uid", "=", "")
    .where("groups.name", "=", organization)
    .where("repos.name", "=", name)
    .executeTakeFirst();
}

/** Bounds in epoch ms, both inclusive. */
export interface HistoryWindow {
  start?: number;
  end?: number;
}

/** The digests a tag has pointed to, oldest first (then by seq), at most HISTORY_LIMIT. */
export async function readTagHistory(
  db: Db,
  repoUid: string,
  tagName: string,
  window: HistoryWindow,
): Promise<Array<{ digest: string; update_time: number }>> {
  let query = db
    .selectFrom("tag_history")
    .select(["digest", "update_time"])
    .where("repo_uid", "=", repoUid)
    .where("tag_name", "=", tagName);
  if (window.start !== undefined) query = query.where("update_time", ">=", window.start);
  if (window.end !== undefined) query = query.where("update_time", "<=", window.end);
  const rows = await query.orderBy("update_time").orderBy("seq").limit(HISTORY_LIMIT).execute();
  // bigint columns come back as strings from PostgreSQL.
  return rows.map((r) => ({ digest: r.digest, update_time: Number(r.update_time) }));
}
