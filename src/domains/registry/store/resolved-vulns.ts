import { createHash } from "node:crypto";
import type { Selectable } from "kysely";
import type { Page } from "../../../aip/pagination.js";
import { applyPage, countRows, listConditions, type ListScope, type UidColumns } from "../../kit/list-query.js";
import type { Db } from "../../kit/schema.js";
import { parseManifest, platformEntries } from "../manifest.js";
import type { ResolvedVulnTable, ResolvedVulnsReportTable } from "../report-tables.js";
import { findingsOf, reportsOf, type ReportFindingRow } from "./image-reports.js";

export type ResolvedVulnsReportRow = Selectable<ResolvedVulnsReportTable>;
export type ResolvedVulnRow = Selectable<ResolvedVulnTable>;

export const DAY_MS = 86_400_000;

/** Sortable fields: API name to column. */
export const resolvedVulnsOrderable = { date: "day", tag: "tag_name" };

/** Uids are UIDPs under the repo: its group is two segments up. */
const COLUMNS: UidColumns = { uid: "resolved_vulns_reports.uid", parent: "resolved_vulns_reports.repo_uid", ownerSegments: 2 };

/** A day's report uid: `<repo uid>/<16 hex of sha256(tag NUL day)>`, the same for every move of that tag that day. */
export function resolvedReportUid(repoUid: string, tagName: string, day: number): string {
  return `${repoUid}/${createHash("sha256").update(`${tagName}\0${day}`).digest("hex").slice(0, 16)}`;
}

const normalized = (row: ResolvedVulnsReportRow): ResolvedVulnsReportRow => ({ ...row, day: Number(row.day), move_time: Number(row.move_time), update_time: Number(row.update_time) });

/**
 * A tag of a repo moved from `fromDigest` to `toDigest` at `time`: the day's report (UTC) starts
 * at `fromDigest`, or, when the tag already moved that day, keeps its start and now ends at
 * `toDigest`. It is resolved at once when both digests' reports are done, else when the later one
 * is (`refreshResolvedReports`). Call it in the transaction that moves the tag.
 */
export async function recordTagMove(db: Db, repoUid: string, tagName: string, fromDigest: string, toDigest: string, time: number): Promise<void> {
  const day = Math.floor(time / DAY_MS) * DAY_MS;
  const uid = resolvedReportUid(repoUid, tagName, day);
  const row = await db
    .insertInto("resolved_vulns_reports")
    .values({ uid, repo_uid: repoUid, tag_name: tagName, day, from_digest: fromDigest, to_digest: toDigest, state: "pending", move_time: time, update_time: time })
    .onConflict((oc) => oc.column("uid").doUpdateSet({ to_digest: toDigest, state: "pending", move_time: time, update_time: time }))
    .returningAll()
    .executeTakeFirstOrThrow();
  // Most moves name images whose reports are not both known yet (or digests the registry does not
  // hold): two indexed reads decide whether resolving now can succeed, keeping a tag move cheap.
  const sides = [...new Set([row.from_digest, row.to_digest])];
  const known = await db.selectFrom("image_reports").select("digest").where("digest", "in", sides).where("status", "!=", "pending").execute();
  if (known.length < sides.length) {
    const indexes = await db.selectFrom("manifests").select("digest").where("repo_uid", "=", repoUid).where("digest", "in", sides).where("kind", "=", "index").execute();
    if (indexes.length === 0) return;
  }
  await resolve(db, normalized(row), time);
}

/** One side of a move: the findings of an image, or of every platform image of an index; undefined until all are done. */
async function sideFindings(db: Db, repoUid: string, digest: string): Promise<ReportFindingRow[] | undefined> {
  const manifest = await db.selectFrom("manifests").select(["kind", "content", "media_type"]).where("repo_uid", "=", repoUid).where("digest", "=", digest).executeTakeFirst();
  let images = [digest];
  if (manifest?.kind === "index") {
    const index = parseManifest(Buffer.from(manifest.content), manifest.media_type);
    images = index.kind === "index" ? platformEntries(index).map((d) => d.digest) : [];
  }
  const reports = await reportsOf(db, images);
  if (images.some((d) => reports.get(d)?.status === "pending" || reports.get(d) === undefined)) return undefined;
  // A failed report tells nothing of its image: nothing can be said resolved by it.
  if (images.some((d) => reports.get(d)!.status === "failed")) return [];
  const findings = await findingsOf(db, images);
  return images.flatMap((d) => findings.get(d) ?? []);
}

const vulnKey = (f: Pick<ReportFindingRow, "advisory_id" | "ecosystem" | "package_name">) => `${f.advisory_id}\0${f.ecosystem.split(":")[0]}\0${f.package_name}`;

/**
 * Resolves a day's report when both sides are known: what affected the `from` image (any platform)
 * and affects no platform of the `to` image, by (advisory, package name): a package upgraded to a
 * version the advisory still affects is not resolved. When either side failed, nothing is.
 */
async function resolve(db: Db, row: ResolvedVulnsReportRow, now: number): Promise<void> {
  await db.deleteFrom("resolved_vulns").where("report_uid", "=", row.uid).execute();
  if (row.from_digest === row.to_digest) {
    await db.updateTable("resolved_vulns_reports").set({ state: "done", update_time: now }).where("uid", "=", row.uid).execute();
    return;
  }
  const from = await sideFindings(db, row.repo_uid, row.from_digest);
  const to = from === undefined ? undefined : await sideFindings(db, row.repo_uid, row.to_digest);
  if (from === undefined || to === undefined) {
    await db.updateTable("resolved_vulns_reports").set({ state: "pending" }).where("uid", "=", row.uid).execute();
    return;
  }
  const remaining = new Set(to.map(vulnKey));
  const resolved = new Map<string, ReportFindingRow>();
  for (const f of from) if (!remaining.has(vulnKey(f)) && !resolved.has(`${f.advisory_id}\0${f.purl}`)) resolved.set(`${f.advisory_id}\0${f.purl}`, f);
  const rows = [...resolved.values()].map((f) => ({ report_uid: row.uid, repo_uid: row.repo_uid, advisory_id: f.advisory_id, purl: f.purl, aliases: f.aliases, severities: f.severities }));
  for (let i = 0; i < rows.length; i += 100) await db.insertInto("resolved_vulns").values(rows.slice(i, i + 100)).execute();
  await db.updateTable("resolved_vulns_reports").set({ state: "done", update_time: now }).where("uid", "=", row.uid).execute();
}

/**
 * The report of `digest` changed: resolves again every day's report whose start or end is it, or
 * an index naming it (so a move recorded before its reports existed is resolved for the day of the
 * move, and stays current as reports change).
 */
export async function refreshResolvedReports(db: Db, digest: string, now: number): Promise<void> {
  const parents = await db.selectFrom("manifest_refs").select("parent_digest").where("child_digest", "=", digest).execute();
  const digests = [...new Set([digest, ...parents.map((p) => p.parent_digest)])];
  const rows = await db
    .selectFrom("resolved_vulns_reports")
    .selectAll()
    .where((eb) => eb.or([eb("from_digest", "in", digests), eb("to_digest", "in", digests)]))
    .execute();
  for (const row of rows) await resolve(db, normalized(row), now);
}

export interface ResolvedVulnsFilter extends ListScope {
  /** Midnight UTC of the first and last days, inclusive. */
  startDay?: number;
  endDay?: number;
  /** Repos, each with the tags wanted (empty: all of its tags). */
  refs?: Array<{ repoUid: string; tags: string[] }>;
}

function filtered(db: Db, filter: ResolvedVulnsFilter) {
  return db.selectFrom("resolved_vulns_reports").where((eb) =>
    eb.and([
      eb("resolved_vulns_reports.state", "=", "done"),
      ...(filter.startDay === undefined ? [] : [eb("resolved_vulns_reports.day", ">=", filter.startDay)]),
      ...(filter.endDay === undefined ? [] : [eb("resolved_vulns_reports.day", "<=", filter.endDay)]),
      ...(filter.refs && filter.refs.length > 0
        ? [
            eb.or(
              filter.refs.map((ref) =>
                ref.tags.length === 0
                  ? eb("resolved_vulns_reports.repo_uid", "=", ref.repoUid)
                  : eb.and([eb("resolved_vulns_reports.repo_uid", "=", ref.repoUid), eb("resolved_vulns_reports.tag_name", "in", ref.tags)]),
              ),
            ),
          ]
        : []),
      ...listConditions(eb, COLUMNS, filter.uidp, filter.visible),
    ]),
  );
}

/** One page of resolved days (up to `limit + 1` rows) with the vulnerabilities each resolved, and the count of all matches. */
export async function listResolvedVulnsReports(
  db: Db,
  filter: ResolvedVulnsFilter,
  page: Page,
): Promise<{ rows: Array<ResolvedVulnsReportRow & { repo_name: string; resolved: ResolvedVulnRow[] }>; total: number }> {
  const rows = (
    await applyPage(
      filtered(db, filter).innerJoin("repos", "repos.uid", "resolved_vulns_reports.repo_uid").selectAll("resolved_vulns_reports").select("repos.name as repo_name"),
      page,
      "resolved_vulns_reports",
    ).execute()
  ).map((r) => ({ ...normalized(r), repo_name: r.repo_name }));
  const total = await countRows(filtered(db, filter), page.total);
  const uids = rows.map((r) => r.uid);
  const vulns = uids.length === 0 ? [] : await db.selectFrom("resolved_vulns").selectAll().where("report_uid", "in", uids).orderBy("advisory_id").orderBy("purl").execute();
  return { rows: rows.map((r) => ({ ...r, resolved: vulns.filter((v) => v.report_uid === r.uid) })), total };
}
