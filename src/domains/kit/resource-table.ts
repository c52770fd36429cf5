import type { Expression, ExpressionBuilder, Kysely, Selectable, SelectQueryBuilder, SqlBool, Updateable } from "kysely";
import type { Page } from "../../aip/pagination.js";
import { isUniqueViolation } from "../../store/dialect.js";
import { rowNotFound, type ConflictError } from "../../store/errors.js";
import { applyPage, countRows, listConditions, type ListScope, type UidColumns, type UidpFilter, type Visibility } from "./list-query.js";
import type { Database, Db } from "./schema.js";
import { CACHEABLE, cachedWith } from "../../store/cached-reads.js";
import { runPrecompiled } from "../../store/precompiled.js";

/**
 * The standard methods of a resource table (a table keyed by a string `uid`): get, list,
 * update and delete by uid, typed by the table's name. A repository declares its table once
 * with `resourceTable` and builds its functions from these; what is special to it (checks
 * before a write, hydration, conflicts) stays in the repository.
 */

/** Sort keys (`order_by`) of a resource's create time, under its name and the hosted service's alias. */
export const CREATE_TIME_ORDERABLE = { create_time: "create_time", created_at: "create_time" };
/** Sort keys of a resource's create and update times. */
export const TIMES_ORDERABLE = { ...CREATE_TIME_ORDERABLE, update_time: "update_time", updated_at: "update_time" };

/** The tables whose rows are API resources: keyed by a string `uid`. */
export type ResourceTableName = { [T in keyof Database]: Database[T] extends { uid: string } ? T : never }[keyof Database];

/** A row of table `T` as read. */
export type RowOf<T extends ResourceTableName> = Selectable<Database[T]>;

/** A resource table: its name, what errors call one row, and how its uid sits in the tree. */
export interface ResourceTable<T extends ResourceTableName> {
  name: T;
  /** What a NOT_FOUND calls a row, e.g. "identity provider". */
  type: string;
  /** For `listConditions`: the qualified uid column, the parent column, the depth below the owning group. */
  columns: UidColumns;
  /** The `runPrecompiled` shape of the read by uid (made once: a name made per read is hashed per read). */
  byUidShape: string;
}

/**
 * Declares a resource table. `parent` is the column holding the parent uid, when there is one
 * (`children_of` then uses its index); `ownerSegments` the segments between a row's uid and its
 * owning group (0 for groups).
 */
export function resourceTable<T extends ResourceTableName>(
  name: T,
  type: string,
  tree: { parent?: keyof Database[T] & string; ownerSegments: number },
): ResourceTable<T> {
  const parent = tree.parent === undefined ? undefined : `${name}.${tree.parent}`;
  return { name, type, columns: { uid: `${name}.uid`, parent, ownerSegments: tree.ownerSegments }, byUidShape: `${name} by uid` };
}

/**
 * The one loosely typed view of the store. Kysely resolves column names from a literal table
 * name; with the name a type parameter (`T extends ResourceTableName`) it cannot, although every
 * such table has the `uid` column these helpers use. The helpers' signatures keep callers typed.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type LooseDb = Kysely<any>;

function loose(db: Db): LooseDb {
  return db as unknown as LooseDb;
}

/** The row `uid` (cached with its read: `cachedWith`); throws NotFoundError. */
export async function getByUid<T extends ResourceTableName>(db: Db, table: ResourceTable<T>, uid: string): Promise<RowOf<T>> {
  const rows = await runPrecompiled(db, table.byUidShape, [uid], (u) => loose(db).selectFrom(table.name as string).selectAll().where("uid", "=", u).modifyEnd(CACHEABLE));
  if (rows.length === 0) throw rowNotFound(table.type, uid);
  // Values derived from the row (a Get's answer) are cached with it while it is (`cachedDerivation`).
  return cachedWith(rows[0] as RowOf<T>, rows);
}

/** Writes `change` to row `uid` and returns the row; throws NotFoundError. */
export async function updateByUid<T extends ResourceTableName>(
  db: Db,
  table: ResourceTable<T>,
  uid: string,
  change: Updateable<Database[T]>,
): Promise<RowOf<T>> {
  const row = await loose(db).updateTable(table.name as string).set(change).where("uid", "=", uid).returningAll().executeTakeFirst();
  if (!row) throw rowNotFound(table.type, uid);
  return row as RowOf<T>;
}

/** Deletes row `uid`; throws NotFoundError when there was none. */
export async function deleteByUid<T extends ResourceTableName>(db: Db, table: ResourceTable<T>, uid: string): Promise<void> {
  if (!(await deleteByUidIfAny(db, table, uid))) throw rowNotFound(table.type, uid);
}

/** Deletes row `uid` if there is one; true when a row was deleted. */
export async function deleteByUidIfAny<T extends ResourceTableName>(db: Db, table: ResourceTable<T>, uid: string): Promise<boolean> {
  const { numDeletedRows } = await loose(db).deleteFrom(table.name as string).where("uid", "=", uid).executeTakeFirst();
  return Number(numDeletedRows) > 0;
}

/** What a listing of a resource table matches. */
export interface ListFilter<T extends ResourceTableName> {
  /** The request's uidp filter; absent for listings that take none. */
  uidp?: UidpFilter;
  /** The caller's visible subtrees (undefined: unrestricted). */
  visible?: Visibility;
  /** Columns that must equal a value; an undefined or "" value is no condition. */
  equals?: { [C in keyof RowOf<T>]?: RowOf<T>[C] };
  /** Further conditions, ANDed with the others. */
  where?: (eb: ExpressionBuilder<Database, T>) => Expression<SqlBool>[];
}

/** The list query: the rows of `table` that `filter` matches, nothing selected yet. */
export function listQuery<T extends ResourceTableName>(db: Db, table: ResourceTable<T>, filter: ListFilter<T>): SelectQueryBuilder<Database, T, object> {
  return looseListQuery(db, table, filter) as unknown as SelectQueryBuilder<Database, T, object>;
}

function looseListQuery<T extends ResourceTableName>(db: Db, table: ResourceTable<T>, filter: ListFilter<T>) {
  return loose(db)
    .selectFrom(table.name as string)
    .where((eb) => {
      const conditions: Expression<SqlBool>[] = [];
      for (const [column, value] of Object.entries(filter.equals ?? {})) {
        if (value !== undefined && value !== "") conditions.push(eb(column, "=", value));
      }
      conditions.push(...listConditions(eb, table.columns, filter.uidp ?? {}, filter.visible));
      conditions.push(...(filter.where?.(eb as unknown as ExpressionBuilder<Database, T>) ?? []));
      return eb.and(conditions);
    });
}

/** One page (up to `limit + 1` rows, in `page.order`) of the rows `filter` matches, and the count of all matches. */
export async function listPage<T extends ResourceTableName>(
  db: Db,
  table: ResourceTable<T>,
  filter: ListFilter<T>,
  page: Page,
): Promise<{ rows: RowOf<T>[]; total: number }> {
  const query = looseListQuery(db, table, filter);
  // On SQLite, a page is cached until the database changes (the results the driver caches for CACHEABLE_READ).
  const rows = await applyPage(query.selectAll(), page, table.name).modifyEnd(CACHEABLE).execute();
  const total = await countRows(query, page.total);
  return { rows: rows as RowOf<T>[], total };
}

/** The resource tables with a `name` column. */
export type NamedTableName = { [T in ResourceTableName]: Database[T] extends { name: string } ? T : never }[ResourceTableName];

/** Sort keys (`order_by`) of a named resource: its name and times. */
export const NAMED_ORDERABLE = { name: "name", ...TIMES_ORDERABLE };

/** What a listing of a named resource matches: the caller's scope and, when given, an exact name. */
export interface NameFilter extends ListScope {
  name?: string;
}

/**
 * The reads of a named resource table: `get`, the row by uid (cached with its read; throws
 * NotFoundError), and `list`, one page (up to `limit + 1` rows, in `page.order`) of the rows with
 * the filter's name (any name when none) in the caller's scope, and the count of all matches.
 */
export function namedResourceReads<T extends NamedTableName>(
  table: ResourceTable<T>,
): { get: (db: Db, uid: string) => Promise<RowOf<T>>; list: (db: Db, filter: NameFilter, page: Page) => Promise<{ rows: RowOf<T>[]; total: number }> } {
  return {
    get: (db, uid) => getByUid(db, table, uid),
    list: (db, { name, uidp, visible }, page) => listPage(db, table, { equals: { name } as ListFilter<T>["equals"], uidp, visible }, page),
  };
}

/**
 * Runs a write, turning a unique-key violation into the ConflictError `conflict` makes
 * (which says which key is taken); other errors pass.
 */
export async function unlessTaken<R>(write: () => Promise<R>, conflict: () => ConflictError): Promise<R> {
  try {
    return await write();
  } catch (error) {
    if (isUniqueViolation(error)) throw conflict();
    throw error;
  }
}
