import { sql, type Selectable, type SqlBool } from "kysely";
import type { Page } from "../../../aip/pagination.js";
import { newChildUid } from "../../../aip/uidp.js";
import { rowNotFound } from "../../../store/errors.js";
import type { ListScope } from "../../kit/list-query.js";
import { getByUid, listPage, resourceTable, TIMES_ORDERABLE } from "../../kit/resource-table.js";
import type { Db } from "../../kit/schema.js";
import type { TagTable } from "../tables.js";
import { shareReferenceLock } from "./reference-lock.js";
import { getRepo } from "./repos.js";
import { appendTagHistory, lastTagHistory } from "./tag-history.js";
import { CACHEABLE } from "../../../store/cached-reads.js";
import { runPrecompiled } from "../../../store/precompiled.js";
import { tagForms } from "../tag-forms.js";
import { refuseImmutableTagChange } from "../immutable-tags.js";

export type TagRow = Selectable<TagTable>;

/** Sortable tag fields: API name to column. */
export const tagOrderable = {
  name: "name",
  digest: "digest",
  ...TIMES_ORDERABLE,
};

const TAGS = resourceTable("tags", "tag", { parent: "repo_uid", ownerSegments: 2 });

export interface TagFilter extends ListScope {
  name?: string;
  digest?: string;
  /** Epoch ms: only tags with update_time at or after it. */
  updatedSince?: number;
  /** Only tags marked deprecated (true) or not (false). */
  deprecated?: boolean;
  /** Leaves out tags having any of these name forms (tag-forms.ts `hiddenForms`); 0 or undefined: none. */
  hiddenForms?: number;
}

/** Throws NOT_FOUND when the tag does not exist. */
export function getTag(db: Db, uid: string): Promise<TagRow> {
  return getByUid(db, TAGS, uid);
}

/** One page (up to `limit + 1` rows, in `page.order`) and the count of all matches. */
export function listTags(db: Db, { name, digest, updatedSince, deprecated, hiddenForms, uidp, visible }: TagFilter, page: Page): Promise<{ rows: TagRow[]; total: number }> {
  return listPage(
    db,
    TAGS,
    {
      equals: { name, digest, deprecated: deprecated === undefined ? undefined : deprecated ? 1 : 0 },
      uidp,
      visible,
      where: (eb) => [
        ...(updatedSince === undefined ? [] : [eb("update_time", ">=", updatedSince)]),
        ...(hiddenForms ? [sql<SqlBool>`(${eb.ref("forms")} & ${sql.lit(hiddenForms)}) = 0`] : []),
      ],
    },
    page,
  );
}

/**
 * Creates the tag `name` of a repo, or moves the existing one (same uid) to
 * `digest`, and records a digest change in the tag history. `deprecated`
 * undefined keeps the tag's flag (false for a new tag): a push moves a tag
 * without touching it. `pushed` (a push or an import sets the tag) records the
 * time as the tag's `push_time`, whether it moved or not. Must run in a
 * transaction so that the tag and its history never disagree; takes the repo's
 * reference lock shared (reference-lock.ts) before it writes. Throws NOT_FOUND
 * when the repo does not exist, TagImmutableError (immutable-tags.ts) when the
 * tag exists at another digest and matches an immutable pattern of the repo.
 */
export async function upsertTag(
  db: Db,
  repoUid: string,
  tag: { name: string; digest: string; deprecated?: boolean },
  now: number,
  options: { pushed?: boolean } = {},
): Promise<TagRow> {
  await shareReferenceLock(db, repoUid);
  await getRepo(db, repoUid);
  const deprecated = tag.deprecated ? 1 : 0;
  // History times never go backwards, so "oldest first" is also "in the order it happened".
  const last = await lastTagHistory(db, repoUid, tag.name);
  const time = Math.max(now, last ? Number(last.update_time) : 0);
  const fresh: TagRow = { uid: newChildUid(repoUid), repo_uid: repoUid, name: tag.name, digest: tag.digest, deprecated, forms: tagForms(tag.name), create_time: time, update_time: time, push_time: options.pushed ? time : 0 };
  const inserted = await db
    .insertInto("tags")
    .values(fresh)
    .onConflict((oc) => oc.columns(["repo_uid", "name"]).doNothing())
    .returningAll()
    .executeTakeFirst();
  let row: TagRow;
  if (inserted) {
    row = inserted;
  } else {
    // Locks the row (PostgreSQL) before reading it, so concurrent moves of one tag run one after the other; a push's time never goes back.
    const current = await db
      .updateTable("tags")
      .set((eb) => (options.pushed ? { push_time: eb.case().when("push_time", "<", time).then(time).else(eb.ref("push_time")).end() } : { update_time: eb.ref("update_time") }))
      .where("repo_uid", "=", repoUid)
      .where("name", "=", tag.name)
      .returningAll()
      .executeTakeFirstOrThrow();
    await refuseImmutableTagChange(db, repoUid, [current], { kind: "move", digest: tag.digest });
    const flag = tag.deprecated === undefined ? Number(current.deprecated) : deprecated;
    if (current.digest === tag.digest && Number(current.deprecated) === flag) return current;
    row = await db
      .updateTable("tags")
      .set({ digest: tag.digest, deprecated: flag, update_time: Math.max(time, Number(current.update_time)) })
      .where("uid", "=", current.uid)
      .returningAll()
      .executeTakeFirstOrThrow();
  }
  await appendTagHistory(db, repoUid, row.name, row.digest, Number(row.update_time));
  return row;
}

/**
 * Deletes a tag; its history stays. Throws NOT_FOUND, or TagImmutableError when it matches an
 * immutable pattern of its repo (then, in a transaction, nothing is deleted).
 */
export async function deleteTag(db: Db, uid: string): Promise<void> {
  const deleted = await db.deleteFrom("tags").where("uid", "=", uid).returningAll().executeTakeFirst();
  if (deleted === undefined) throw rowNotFound("tag", uid);
  await refuseImmutableTagChange(db, deleted.repo_uid, [deleted], { kind: "delete" });
}

/** The tag `name` of a repo, or undefined. */
export async function findTagByName(db: Db, repoUid: string, name: string): Promise<TagRow | undefined> {
  const rows = await runPrecompiled(db, "tag by name", [repoUid, name], (repo, tag) =>
    db.selectFrom("tags").selectAll().where("repo_uid", "=", repo).where("name", "=", tag).modifyEnd(CACHEABLE),
  );
  return rows[0];
}

/**
 * Tag names of a repo in byte order, after `last` (exclusive), at most `limit`, limited to
 * `only` when given: the registry's tag listing.
 */
export async function listTagNames(db: Db, repoUid: string, options: { last?: string; limit: number; only?: string[] }): Promise<string[]> {
  let query = db.selectFrom("tags").select("name").where("repo_uid", "=", repoUid);
  if (options.last !== undefined) query = query.where("name", ">", options.last);
  if (options.only !== undefined) query = options.only.length === 0 ? query.where("name", "in", [""]) : query.where("name", "in", options.only);
  const rows = await query.orderBy("name").limit(options.limit).execute();
  return rows.map((r) => r.name);
}

/** The tags of a repo pointing at `digest`, by name. */
export function findTagsByDigest(db: Db, repoUid: string, digest: string): Promise<TagRow[]> {
  return db.selectFrom("tags").selectAll().where("repo_uid", "=", repoUid).where("digest", "=", digest).orderBy("name").execute();
}

/**
 * Deletes the tag `name` of a repo (its history stays); returns false when there was none.
 * Throws TagImmutableError as `deleteTag`.
 */
export async function deleteTagByName(db: Db, repoUid: string, name: string): Promise<boolean> {
  const deleted = await db.deleteFrom("tags").where("repo_uid", "=", repoUid).where("name", "=", name).returningAll().executeTakeFirst();
  if (deleted !== undefined) await refuseImmutableTagChange(db, repoUid, [deleted], { kind: "delete" });
  return deleted !== undefined;
}
