import type { Insertable, Selectable, Updateable } from "kysely";
import type { Page } from "../../../aip/pagination.js";
import { CACHEABLE } from "../../../store/cached-reads.js";
import { keyTaken } from "../../../store/errors.js";
import { deleteByUid, getByUid, listPage, NAMED_ORDERABLE, resourceTable, unlessTaken, updateByUid, type NameFilter } from "../../kit/resource-table.js";
import type { Db } from "../../kit/schema.js";
import type { UpstreamTable } from "../tables.js";
import { getGroup } from "../../iam/index.js";
import { smallTableWritten, snapshotOf } from "./small-tables.js";

export type UpstreamRow = Selectable<UpstreamTable>;

/** Sortable upstream fields: API name to column. */
export const upstreamOrderable = { ...NAMED_ORDERABLE };

const UPSTREAMS = resourceTable("upstreams", "upstream", { parent: "group_uid", ownerSegments: 1 });

function normalized(row: UpstreamRow): UpstreamRow {
  // bigint columns come back as strings from some drivers.
  return { ...row, tag_freshness_ms: Number(row.tag_freshness_ms), create_time: Number(row.create_time), update_time: Number(row.update_time) };
}

/** The patterns an `include_repos` or `exclude_repos` column holds (a JSON array of strings). */
export function patternsOf(column: string): string[] {
  return JSON.parse(column) as string[];
}

/** Throws NOT_FOUND when the upstream does not exist. */
export async function getUpstream(db: Db, uid: string): Promise<UpstreamRow> {
  return normalized(await getByUid(db, UPSTREAMS, uid));
}

/** One page (up to `limit + 1` rows, in `page.order`) and the count of all matches. */
export async function listUpstreams(db: Db, { name, uidp, visible }: NameFilter, page: Page): Promise<{ rows: UpstreamRow[]; total: number }> {
  const { rows, total } = await listPage(db, UPSTREAMS, { equals: { name }, uidp, visible }, page);
  return { rows: rows.map(normalized), total };
}

/** Every upstream of every organization, from a snapshot (store/small-tables.ts): what a pull's name is matched against. */
export function allUpstreams(db: Db): Promise<UpstreamRow[]> {
  return snapshotOf(db, "upstreams", async () => (await db.selectFrom("upstreams").selectAll().orderBy("repo_prefix").execute()).map(normalized));
}

/** Every upstream of organization `groupUid`, by prefix. */
export async function upstreamsOf(db: Db, groupUid: string): Promise<UpstreamRow[]> {
  const rows = await db.selectFrom("upstreams").selectAll().where("group_uid", "=", groupUid).orderBy("repo_prefix").modifyEnd(CACHEABLE).execute();
  return rows.map(normalized);
}

/** Inserts an upstream; throws NOT_FOUND when the group does not exist, ALREADY_EXISTS when the organization has one for the prefix. */
export async function insertUpstream(db: Db, row: Insertable<UpstreamTable>): Promise<UpstreamRow> {
  await getGroup(db, row.group_uid);
  smallTableWritten();
  await unlessTaken(
    () => db.insertInto("upstreams").values(row).execute(),
    () => keyTaken("upstream", row.repo_prefix, `the organization already has an upstream for the prefix ${row.repo_prefix}`),
  );
  return getUpstream(db, row.uid);
}

/** Writes an upstream's columns; throws NOT_FOUND. */
export async function updateUpstream(db: Db, uid: string, change: Updateable<UpstreamTable>): Promise<UpstreamRow> {
  smallTableWritten();
  return normalized(await updateByUid(db, UPSTREAMS, uid, change));
}

/** Throws NOT_FOUND when the upstream does not exist. */
export function deleteUpstream(db: Db, uid: string): Promise<void> {
  smallTableWritten();
  return deleteByUid(db, UPSTREAMS, uid);
}

/** When tag `tag` of the repo was last found current at its upstream (epoch ms), or undefined. */
export async function tagCheckTime(db: Db, repoUid: string, tag: string): Promise<number | undefined> {
  const row = await db.selectFrom("upstream_tag_checks").select("check_time").where("repo_uid", "=", repoUid).where("tag", "=", tag).executeTakeFirst();
  return row === undefined ? undefined : Number(row.check_time);
}

/** Records that tag `tag` of the repo was found current at its upstream at `time`. */
export async function recordTagCheck(db: Db, repoUid: string, tag: string, time: number): Promise<void> {
  await db
    .insertInto("upstream_tag_checks")
    .values({ repo_uid: repoUid, tag, check_time: time })
    .onConflict((oc) => oc.columns(["repo_uid", "tag"]).doUpdateSet({ check_time: time }))
    .execute();
}
