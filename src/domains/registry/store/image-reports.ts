import type { Kysely, Selectable } from "kysely";
import type { InventoryPackage } from "../../../engines/inventory/index.js";
import { inTransaction } from "../../../store/transaction.js";
import type { Database, Db } from "../../kit/schema.js";
import type { ImageReportTable, ReportFindingTable } from "../report-tables.js";
import { inTurns, ITEMS_PER_TURN, nextTurn } from "../turns.js";
import { nameKey, type Finding } from "../vulnerability-match.js";

export type ImageReportRow = Selectable<ImageReportTable>;
export type ReportFindingRow = Selectable<ReportFindingTable>;

const ROWS_PER_INSERT = 100;
const VALUES_PER_IN = 500;

function chunks<T>(items: readonly T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

const normalized = (row: ImageReportRow): ImageReportRow => ({
  ...row,
  packages: Number(row.packages),
  critical: Number(row.critical),
  high: Number(row.high),
  medium: Number(row.medium),
  low: Number(row.low),
  unknown: Number(row.unknown),
  create_time: Number(row.create_time),
  update_time: Number(row.update_time),
});

/** A PENDING report for `digest` unless it has one: what a queued inventory shows until it is done. */
export async function ensureReport(db: Db, digest: string, now: number): Promise<void> {
  await db
    .insertInto("image_reports")
    .values({ digest, status: "pending", reason: "", distro: "", packages: 0, package_source: "", critical: 0, high: 0, medium: 0, low: 0, unknown: 0, create_time: now, update_time: now })
    .onConflict((oc) => oc.column("digest").doNothing())
    .execute();
}

/** The reports of `digests` that exist, by digest. */
export async function reportsOf(db: Db, digests: readonly string[]): Promise<Map<string, ImageReportRow>> {
  const out = new Map<string, ImageReportRow>();
  for (const part of chunks([...new Set(digests)], VALUES_PER_IN)) {
    for (const row of await db.selectFrom("image_reports").selectAll().where("digest", "in", part).execute()) out.set(row.digest, normalized(row));
  }
  return out;
}

/** The findings of `digests`, by digest, in the order they were written (severity, advisory, purl). */
export async function findingsOf(db: Db, digests: readonly string[]): Promise<Map<string, ReportFindingRow[]>> {
  const out = new Map<string, ReportFindingRow[]>();
  for (const part of chunks([...new Set(digests)], VALUES_PER_IN)) {
    const rows = await db.selectFrom("report_findings").selectAll().where("digest", "in", part).execute();
    for (const row of rows) out.set(row.digest, [...(out.get(row.digest) ?? []), { ...row, score_tenths: row.score_tenths === null ? null : Number(row.score_tenths) }]);
  }
  const rank = ["CRITICAL", "HIGH", "MEDIUM", "LOW", "UNKNOWN"];
  for (const rows of out.values()) rows.sort((a, b) => rank.indexOf(a.severity) - rank.indexOf(b.severity) || (a.advisory_id < b.advisory_id ? -1 : a.advisory_id > b.advisory_id ? 1 : a.purl < b.purl ? -1 : 1));
  return out;
}

/** The stored inventory of an image. */
export async function packagesOf(db: Db, digest: string): Promise<InventoryPackage[]> {
  const rows = await db.selectFrom("image_packages").select(["purl", "ecosystem", "name", "version"]).where("digest", "=", digest).orderBy("purl").execute();
  return rows;
}

/**
 * Replaces the inventory of an image, ITEMS_PER_TURN rows at a time, each slice in a transaction
 * of its own and the event loop given back between two (`inTurns`): an inventory of 300,000
 * packages is neither one long turn of the loop nor one transaction whose commit (with SQLite, and
 * the checkpoint of its write-ahead log that follows) holds the loop for most of a second. Until
 * the last slice is written, readers see part of the old or the new inventory: the image's report
 * job, the only writer of it, holds the job's lease meanwhile.
 */
export async function replaceInventory(db: Kysely<Database>, digest: string, packages: readonly InventoryPackage[]): Promise<void> {
  for (;;) {
    const slice = db.selectFrom("image_packages").select("purl").where("digest", "=", digest).limit(ITEMS_PER_TURN);
    const deleted = await db.deleteFrom("image_packages").where("digest", "=", digest).where("purl", "in", slice).executeTakeFirst();
    if (Number(deleted.numDeletedRows) < ITEMS_PER_TURN) break;
    await nextTurn();
  }
  await inTurns(packages, (slice) =>
    inTransaction(db, undefined, async (trx) => {
      const rows = slice.map((p) => ({ digest, purl: p.purl, ecosystem: p.ecosystem, name: p.name, name_key: nameKey(p.ecosystem, p.name), version: p.version }));
      for (const part of chunks(rows, ROWS_PER_INSERT)) await trx.insertInto("image_packages").values(part).execute();
    }),
  );
}

/** Writes an image's report and replaces its findings. */
export async function writeReport(db: Db, row: ImageReportRow, findings: readonly Finding[]): Promise<void> {
  await db
    .insertInto("image_reports")
    .values(row)
    .onConflict((oc) =>
      oc.column("digest").doUpdateSet({
        status: row.status,
        reason: row.reason,
        distro: row.distro,
        packages: row.packages,
        package_source: row.package_source,
        critical: row.critical,
        high: row.high,
        medium: row.medium,
        low: row.low,
        unknown: row.unknown,
        update_time: row.update_time,
      }),
    )
    .execute();
  await db.deleteFrom("report_findings").where("digest", "=", row.digest).execute();
  const rows = findings.map((f) => ({
    digest: row.digest,
    advisory_id: f.advisoryId,
    purl: f.purl,
    aliases: JSON.stringify(f.aliases),
    ecosystem: f.ecosystem,
    package_name: f.packageName,
    installed_version: f.installedVersion,
    fixed_version: f.fixedVersion,
    severity: f.severity,
    score_tenths: f.score === undefined ? null : Math.round(f.score * 10),
    severities: JSON.stringify(f.severities),
  }));
  for (const part of chunks(rows, ROWS_PER_INSERT)) await db.insertInto("report_findings").values(part).execute();
}

/**
 * The images whose inventory holds a package one of `packages` names, by the package index
 * (`name_key`), the ecosystems compared by name (`Debian:12` and `Debian` are one family): the
 * reports an advisory import must match again.
 */
export async function digestsNaming(db: Db, packages: readonly { ecosystem: string; name: string }[]): Promise<string[]> {
  const family = (ecosystem: string) => ecosystem.split(":")[0];
  const wanted = new Map<string, Set<string>>();
  for (const p of packages) {
    const key = nameKey(p.ecosystem, p.name);
    wanted.set(key, (wanted.get(key) ?? new Set()).add(family(p.ecosystem)));
  }
  const digests = new Set<string>();
  for (const part of chunks([...wanted.keys()], VALUES_PER_IN)) {
    const rows = await db.selectFrom("image_packages").select(["digest", "ecosystem", "name_key"]).where("name_key", "in", part).execute();
    for (const row of rows) if (wanted.get(row.name_key)?.has(family(row.ecosystem))) digests.add(row.digest);
  }
  return [...digests].sort();
}

/** The stored image manifests (not referrers) that have no report yet, at most `limit`: what a worker starting up enqueues. */
export async function manifestsWithoutReport(db: Db, limit: number): Promise<Array<{ repo_uid: string; digest: string }>> {
  return db
    .selectFrom("manifests")
    .leftJoin("image_reports", "image_reports.digest", "manifests.digest")
    .select(["manifests.repo_uid", "manifests.digest"])
    .where("manifests.kind", "=", "image")
    .where("manifests.subject_digest", "=", "")
    .where("image_reports.digest", "is", null)
    .orderBy("manifests.digest")
    .limit(limit)
    .execute();
}
