import { sql, type Expression, type ExpressionBuilder, type Selectable } from "kysely";
import { rowNotFound } from "../../../store/errors.js";
import type { Page } from "../../../aip/pagination.js";
import { CACHEABLE } from "../../../store/cached-reads.js";
import { applyPage, containsText, countRows, listConditions, type UidColumns, type UidpFilter } from "../../kit/list-query.js";
import type { Database, Db } from "../../kit/schema.js";
import type { AdvisoryTable } from "../tables.js";

export type AdvisoryRow = Selectable<AdvisoryTable>;

/** Sortable advisory fields: API name to column. */
export const advisoryOrderable = {
  advisory_id: "advisory_id",
  artifact_name: "artifact_name",
  create_time: "create_time",
  created_at: "create_time",
  update_time: "update_time",
  updated_at: "update_time",
};

/** Advisory uids are root-level: no owning group. */
const ADVISORY_COLUMNS: UidColumns = { uid: "advisories.uid", ownerSegments: 0 };

/** Conditions combine with AND; each list of values is one condition (OR within it); empty lists are no condition. */
export interface AdvisoryFilter {
  uidp?: UidpFilter;
  /** Records found by one of the names of each list (ids or aliases). */
  recordNames?: string[][];
  /** Artifact names, exact: one of each list. */
  artifactNames?: string[][];
  /** An OSV ecosystem: exact, and without a `:suffix` every suffix of it too. */
  ecosystem?: string;
  /** OSV ecosystems, each as `ecosystem`: one of them (empty: no condition). */
  ecosystems?: string[];
  /** Records found by one of these aliases (not by their own id). */
  aliases?: string[];
  /** Text the record's id, an alias, the package name or the summary contains, ignoring case. */
  query?: string;
  /** Only these uids (the advisories a version matched). */
  uids?: string[];
  /** Withdrawn records' advisories too (documents show them; advisories do not). */
  includeWithdrawn?: boolean;
}

/** The ids of the records found by any of `names` (their ids or aliases): a subquery for `in`. */
export function recordsNamed(db: Db, names: string[]) {
  return db.selectFrom("osv_names").select("osv_names.record_uid").where("osv_names.name", "in", names);
}

/** The ids of the records that alias one of `aliases` (a record's own id is not an alias): a subquery for `in`. */
function recordsAliased(db: Db, aliases: string[]) {
  return db
    .selectFrom("osv_names")
    .select("osv_names.record_uid")
    .where("osv_names.name", "in", aliases)
    .whereRef("osv_names.name", "<>", "osv_names.record_uid");
}

/** `query`: in the record's id or aliases (its names), the package name or the summary, ignoring case. */
function queryCondition(db: Db, eb: ExpressionBuilder<Database, "advisories">, query: string) {
  const text = query.toLowerCase();
  const contains = (ref: Expression<string>) => containsText(sql<string>`lower(${ref})`, text);
  return eb.or([
    contains(eb.ref("advisories.artifact_name")),
    contains(eb.ref("advisories.summary")),
    eb("advisories.advisory_id", "in", db.selectFrom("osv_names").select("osv_names.record_uid").where((n) => contains(n.ref("osv_names.name")))),
  ]);
}

/** The ecosystem itself, or, without a `:suffix`, also any `<ecosystem>:<suffix>` (";" follows ":" in byte order). */
function ecosystemCondition(eb: ExpressionBuilder<Database, "advisories">, ecosystem: string) {
  if (ecosystem.includes(":")) return eb("advisories.ecosystem", "=", ecosystem);
  return eb.or([eb("advisories.ecosystem", "=", ecosystem), eb.and([eb("advisories.ecosystem", ">", `${ecosystem}:`), eb("advisories.ecosystem", "<", `${ecosystem};`)])]);
}

/** The lists of a filter that are conditions: the non-empty ones. */
export const nonEmpty = (lists: string[][] | undefined): string[][] => (lists ?? []).filter((list) => list.length > 0);

/** The advisories matching `filter`, as a query to select from. */
export function filteredAdvisories(db: Db, filter: AdvisoryFilter) {
  return db.selectFrom("advisories").where((eb) =>
    eb.and([
      ...(filter.includeWithdrawn ? [] : [eb("advisories.withdrawn_time", "is", null)]),
      ...nonEmpty(filter.recordNames).map((names) => eb("advisories.advisory_id", "in", recordsNamed(db, names))),
      ...nonEmpty(filter.artifactNames).map((names) => eb("advisories.artifact_name", "in", names)),
      ...(filter.ecosystem ? [ecosystemCondition(eb, filter.ecosystem)] : []),
      ...(filter.ecosystems?.length ? [eb.or(filter.ecosystems.map((e) => ecosystemCondition(eb, e)))] : []),
      ...(filter.aliases?.length ? [eb("advisories.advisory_id", "in", recordsAliased(db, filter.aliases))] : []),
      ...(filter.query ? [queryCondition(db, eb, filter.query)] : []),
      ...(filter.uids ? [filter.uids.length > 0 ? eb("advisories.uid", "in", filter.uids) : eb.lit(false)] : []),
      ...listConditions(eb, ADVISORY_COLUMNS, filter.uidp ?? {}, undefined),
    ]),
  );
}

/** An advisory of a record that is not withdrawn; throws NOT_FOUND. */
export async function getAdvisory(db: Db, uid: string): Promise<AdvisoryRow> {
  const row = await db.selectFrom("advisories").selectAll().where("uid", "=", uid).where("withdrawn_time", "is", null).executeTakeFirst();
  if (!row) throw rowNotFound("advisory", uid);
  return row;
}

/** What a page needs of an advisory before its message: its uid, its etag and the columns it may be ordered by. */
export type AdvisoryKey = Pick<AdvisoryRow, "uid" | "etag" | "advisory_id" | "artifact_name" | "create_time" | "update_time">;

/**
 * One page of keys (up to `limit + 1`, in `page.order`) and the count of all matches. The rows
 * themselves are read by `servedAdvisories`, for the keys whose messages are not cached.
 */
export async function listAdvisoryKeys(db: Db, filter: AdvisoryFilter, page: Page): Promise<{ rows: AdvisoryKey[]; total: number }> {
  const keys = filteredAdvisories(db, filter).select(["advisories.uid", "advisories.etag", "advisories.advisory_id", "advisories.artifact_name", "advisories.create_time", "advisories.update_time"]);
  // On SQLite, a page of keys is cached until the database changes (the results the driver caches for CACHEABLE_READ).
  const rows = await applyPage(keys, page, "advisories").modifyEnd(CACHEABLE).execute();
  const total = await countRows(filteredAdvisories(db, filter), page.total);
  return { rows, total };
}

/** The served (not withdrawn) advisories among `uids`, in no order; a uid not found is left out. */
export async function servedAdvisories(db: Db, uids: readonly string[]): Promise<AdvisoryRow[]> {
  if (uids.length === 0) return [];
  return db.selectFrom("advisories").selectAll().where("uid", "in", uids).where("withdrawn_time", "is", null).execute();
}

/** The advisories among `uids` (withdrawn or not), by advisory id; a uid not found is left out. */
export async function advisoriesByUid(db: Db, uids: readonly string[]): Promise<AdvisoryRow[]> {
  return db.selectFrom("advisories").selectAll().where("uid", "in", uids).orderBy("advisory_id").execute();
}

/** Every match of `filter` with what matching a version needs, at most `limit + 1` rows (so the caller sees an overflow). */
export async function advisoryCandidates(db: Db, filter: AdvisoryFilter, limit: number): Promise<Pick<AdvisoryRow, "uid" | "ecosystem" | "affected">[]> {
  return filteredAdvisories(db, filter).select(["advisories.uid", "advisories.ecosystem", "advisories.affected"]).limit(limit + 1).execute();
}

/** Values per `in (...)` list when reading advisories by name. */
const NAMES_PER_QUERY = 500;

/**
 * The advisories (of records not withdrawn) whose artifact name is one of `names`, exactly: what
 * an image's packages are matched against (the caller compares ecosystems and versions).
 */
export async function advisoriesNamed(db: Db, names: readonly string[]): Promise<Pick<AdvisoryRow, "advisory_id" | "ecosystem" | "artifact_name" | "affected" | "aliases" | "severity">[]> {
  const unique = [...new Set(names)];
  const out: Pick<AdvisoryRow, "advisory_id" | "ecosystem" | "artifact_name" | "affected" | "aliases" | "severity">[] = [];
  for (let i = 0; i < unique.length; i += NAMES_PER_QUERY) {
    const rows = await db
      .selectFrom("advisories")
      .select(["advisory_id", "ecosystem", "artifact_name", "affected", "aliases", "severity"])
      .where("artifact_name", "in", unique.slice(i, i + NAMES_PER_QUERY))
      .where("withdrawn_time", "is", null)
      .execute();
    out.push(...rows);
  }
  return out;
}

/** The `database_specific` object of each of the records `ids` (GitHub's advisories keep a severity word there). */
export async function recordsDatabaseSpecific(db: Db, ids: readonly string[]): Promise<Map<string, unknown>> {
  const out = new Map<string, unknown>();
  const unique = [...new Set(ids)];
  for (let i = 0; i < unique.length; i += NAMES_PER_QUERY) {
    const rows = await db.selectFrom("osv_records").select(["uid", "document"]).where("uid", "in", unique.slice(i, i + NAMES_PER_QUERY)).execute();
    for (const row of rows) out.set(row.uid, (JSON.parse(row.document) as { database_specific?: unknown }).database_specific);
  }
  return out;
}
