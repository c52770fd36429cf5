import type { ExpressionBuilder, Selectable } from "kysely";
import type { Page } from "../../../aip/pagination.js";
import { rowNotFound } from "../../../store/errors.js";
import { applyPage, containsText, countRows, listConditions, type UidColumns, type UidpFilter, type Visibility } from "../../kit/list-query.js";
import type { Database, Db } from "../../kit/schema.js";
import type { ArtifactRows } from "../artifact-rows.js";
import type { ArtifactTable, ArtifactVersionTable } from "../tables.js";
import { trigramsOf } from "../trigrams.js";
import { CACHEABLE } from "../../../store/cached-reads.js";

export type ArtifactRow = Selectable<ArtifactTable>;
export type ArtifactVersionRow = Selectable<ArtifactVersionTable>;

/** Sortable artifact fields: API name to column. */
export const artifactOrderable = {
  name: "name",
  ecosystem: "ecosystem",
  latest_version: "latest_version",
  version_count: "version_count",
  create_time: "create_time",
  created_at: "create_time",
  update_time: "update_time",
  updated_at: "update_time",
};

/** Sortable version fields: `version` is the ecosystem's ordering. */
export const artifactVersionOrderable = {
  version: "rank",
  publish_time: "publish_time",
  create_time: "create_time",
  created_at: "create_time",
};

/** Artifacts hang one segment below their organization. */
const ARTIFACT_COLUMNS: UidColumns = { uid: "artifacts.uid", ownerSegments: 1 };
/** Versions hang one segment below their artifact. */
const VERSION_COLUMNS: UidColumns = { uid: "artifact_versions.uid", ownerSegments: 2 };

export interface ArtifactFilter {
  /** OSV ecosystem names; at least one. */
  ecosystems: string[];
  /** Text the name contains, ignoring case. */
  query?: string;
  /** The request's hierarchy filter (none: every artifact visible). */
  uidp?: UidpFilter;
  /** The organizations the caller may list in (undefined: all). */
  visible: Visibility;
}

/** Index rows counted per trigram when choosing where a search starts: past this, a trigram is merely common. */
const RARITY_CAP = 256;
/** Trigrams of a long query weighed (evenly spread over it); the whole text is checked on the rows anyway. */
const MAX_WEIGHED_TRIGRAMS = 16;

/**
 * The trigram of `query` (lower case, 3 or more characters) that the fewest names hold, counting
 * at most RARITY_CAP index rows of each of at most MAX_WEIGHED_TRIGRAMS, so choosing costs the same
 * whatever the index's size; undefined when some trigram weighed is in no name (nothing matches).
 */
async function rarestTrigram(db: Db, query: string): Promise<string | undefined> {
  const all = trigramsOf(query);
  const step = Math.max(1, all.length / MAX_WEIGHED_TRIGRAMS);
  const grams = [...new Set(Array.from({ length: Math.min(all.length, MAX_WEIGHED_TRIGRAMS) }, (_, i) => all[Math.floor(i * step)]))];
  const capped = grams.map((gram, i) =>
    db
      .selectFrom(db.selectFrom("artifact_trigrams").select("artifact_trigrams.trigram").where("artifact_trigrams.trigram", "=", gram).limit(RARITY_CAP).as(`p${i}`))
      .select(`p${i}.trigram as trigram`),
  );
  const union = capped.slice(1).reduce((q, next) => q.unionAll(next), capped[0]);
  const counts = await db
    .selectFrom(union.as("capped"))
    .select((eb) => ["capped.trigram", eb.fn.countAll<number | string>().as("names")])
    .groupBy("capped.trigram")
    .modifyEnd(CACHEABLE)
    .execute();
  if (counts.length < grams.length) return undefined;
  return counts.reduce((a, b) => (Number(b.names) < Number(a.names) ? b : a)).trigram;
}

/** The conditions of `filter` on the `artifacts` table; `query` by LIKE (the whole text, % and _ literal). */
function conditions(eb: ExpressionBuilder<Database, "artifacts">, filter: ArtifactFilter) {
  const text = filter.query?.toLowerCase();
  return eb.and([
    eb("artifacts.ecosystem", "in", filter.ecosystems),
    ...(text ? [containsText(eb.ref("artifacts.name_lower"), text)] : []),
    ...listConditions(eb, ARTIFACT_COLUMNS, filter.uidp ?? {}, filter.visible),
  ]);
}

/**
 * One page (up to `limit + 1` rows) and the count of all matches (on SQLite the reads are cached
 * until the database changes, CACHEABLE, as every listing's are). A `query` of 3 or more
 * characters starts from the name index's rows of its rarest trigram, so its cost follows the
 * names holding that trigram rather than the size of the index; a shorter one scans the artifacts.
 */
export async function listArtifacts(db: Db, filter: ArtifactFilter, page: Page): Promise<{ rows: ArtifactRow[]; total: number }> {
  const text = filter.query?.toLowerCase() ?? "";
  if (Array.from(text).length < 3) {
    const scanned = db.selectFrom("artifacts").where((eb) => conditions(eb, filter));
    const rows = await applyPage(scanned.selectAll(), page, "artifacts").modifyEnd(CACHEABLE).execute();
    return { rows, total: await countRows(scanned, page.total) };
  }
  const trigram = await rarestTrigram(db, text);
  if (trigram === undefined) return { rows: [], total: 0 };
  const indexed = db
    .selectFrom("artifact_trigrams")
    .innerJoin("artifacts", "artifacts.uid", "artifact_trigrams.artifact_uid")
    .where("artifact_trigrams.trigram", "=", trigram)
    .where((eb) => conditions(eb as unknown as ExpressionBuilder<Database, "artifacts">, filter));
  const rows = await applyPage(indexed.selectAll("artifacts"), page, "artifacts").modifyEnd(CACHEABLE).execute();
  return { rows, total: await countRows(indexed, page.total) };
}

/** The number of artifacts of each ecosystem in `filter`, `query` aside (ecosystems without any are absent). */
export async function countArtifacts(db: Db, filter: ArtifactFilter): Promise<Map<string, number>> {
  const rows = await db
    .selectFrom("artifacts")
    .where((eb) => conditions(eb, { ...filter, query: undefined }))
    .select((eb) => ["artifacts.ecosystem", eb.fn.countAll().as("total")])
    .groupBy("artifacts.ecosystem")
    .execute();
  return new Map(rows.map((r) => [r.ecosystem, Number(r.total)]));
}

/** An artifact; throws NOT_FOUND. */
export async function getArtifact(db: Db, uid: string): Promise<ArtifactRow> {
  const row = await db.selectFrom("artifacts").selectAll().where("uid", "=", uid).executeTakeFirst();
  if (!row) throw rowNotFound("artifact", uid);
  return row;
}

/** One page of an artifact's versions within the hierarchy filter `uidp`, and their count. */
export async function listArtifactVersions(db: Db, artifactUid: string, uidp: UidpFilter, page: Page): Promise<{ rows: ArtifactVersionRow[]; total: number }> {
  const query = () =>
    db
      .selectFrom("artifact_versions")
      .where("artifact_versions.artifact_uid", "=", artifactUid)
      .where((eb) => eb.and(listConditions(eb, VERSION_COLUMNS, uidp, undefined)));
  const rows = await applyPage(query().selectAll(), page, "artifact_versions").execute();
  return { rows, total: await countRows(query(), page.total) };
}

/** The stored digests of `uids`, with their create times. */
export async function storedArtifacts(db: Db, uids: string[]): Promise<Map<string, { digest: string; create_time: number }>> {
  if (uids.length === 0) return new Map();
  const rows = await db.selectFrom("artifacts").select(["uid", "digest", "create_time"]).where("uid", "in", uids).execute();
  return new Map(rows.map((r) => [r.uid, { digest: r.digest, create_time: Number(r.create_time) }]));
}

/**
 * Writes artifacts with all their versions and their rows of the name index, replacing any stored
 * under the same uid (whose index rows change only when the lower-case name does).
 */
export async function writeArtifacts(db: Db, writes: Array<{ rows: ArtifactRows; createTime: number; updateTime: number; replace: boolean }>): Promise<void> {
  const replaced = writes.filter((w) => w.replace).map((w) => w.rows.artifact.uid);
  const storedNames = new Map<string, string>();
  if (replaced.length > 0) {
    for (const r of await db.selectFrom("artifacts").select(["uid", "name_lower"]).where("uid", "in", replaced).execute()) storedNames.set(r.uid, r.name_lower);
    await db.deleteFrom("artifact_versions").where("artifact_uid", "in", replaced).execute();
    await db.deleteFrom("artifacts").where("uid", "in", replaced).execute();
  }
  const trigrams: Array<{ trigram: string; artifact_uid: string }> = [];
  for (const { rows, createTime, updateTime } of writes) {
    const { uid, name_lower: name } = rows.artifact;
    await db.insertInto("artifacts").values({ ...rows.artifact, create_time: createTime, update_time: updateTime }).execute();
    const versions = rows.versions.map((v) => ({ ...v, create_time: createTime, update_time: updateTime }));
    for (let i = 0; i < versions.length; i += 500) await db.insertInto("artifact_versions").values(versions.slice(i, i + 500)).execute();
    const before = storedNames.get(uid);
    if (before === name) continue;
    if (before !== undefined && trigramsOf(before).length > 0) await db.deleteFrom("artifact_trigrams").where("artifact_trigrams.trigram", "in", trigramsOf(before)).where("artifact_trigrams.artifact_uid", "=", uid).execute();
    for (const trigram of trigramsOf(name)) trigrams.push({ trigram, artifact_uid: uid });
  }
  for (let i = 0; i < trigrams.length; i += 1000) await db.insertInto("artifact_trigrams").values(trigrams.slice(i, i + 1000)).execute();
}

