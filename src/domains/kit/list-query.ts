import { sql, type Expression, type ExpressionBuilder, type SelectQueryBuilder, type SqlBool } from "kysely";
import type { Page } from "../../aip/pagination.js";
import { CACHEABLE_READ } from "../../store/cached-reads.js";
import { ancestorsOf, childUidLength, descendantRange, isDescendant, isSelfOrDescendant, uidLength, type UidpFilter } from "../../aip/uidp.js";

export type { UidpFilter };


/**
 * Where a listing may look: the caller's visible subtrees. `undefined` means
 * unrestricted; an empty array means nothing is visible.
 */
export type Visibility = string[] | undefined;

/** Where a listing may look: the request's uidp filter and the caller's visible subtrees. */
export interface ListScope {
  uidp: UidpFilter;
  visible: Visibility;
}

type AnyQuery<O> = SelectQueryBuilder<any, any, O>;

/** How a table's uid column relates to the tree. */
export interface UidColumns {
  /** The uid column, qualified. */
  uid: string;
  /** A column holding the parent uid, if the table has one: `children_of` then uses its index. */
  parent?: string;
  /** Segments between a row's uid and its owning group (0 for groups); `in_root` needs it. */
  ownerSegments: number;
}

/**
 * Every condition of a listing: the uidp filter and the caller's visibility,
 * combined with AND. Visible subtrees that the filter already lies inside make
 * the visibility condition unnecessary, and those disjoint from the filter's
 * subtree are dropped, so the common case (a caller listing inside what it may
 * see) costs no extra condition.
 */
export function listConditions(
  eb: ExpressionBuilder<any, any>,
  columns: UidColumns,
  filter: UidpFilter,
  visible: Visibility,
): Expression<SqlBool>[] {
  const ref = eb.ref(columns.uid);
  const out: Expression<SqlBool>[] = [];
  if (filter.descendantsOf) {
    const { low, high } = descendantRange(filter.descendantsOf);
    out.push(eb.and([eb(ref, ">=", low), eb(ref, "<", high)]));
  }
  if (filter.childrenOf) {
    if (columns.parent) {
      out.push(eb(eb.ref(columns.parent), "=", filter.childrenOf));
    } else {
      const { low, high } = descendantRange(filter.childrenOf);
      out.push(eb.and([eb(ref, ">=", low), eb(ref, "<", high), eb(eb.fn("length", [ref]), "=", childUidLength(filter.childrenOf))]));
    }
  }
  if (filter.ancestorsOf) {
    const ancestors = ancestorsOf(filter.ancestorsOf);
    out.push(ancestors.length > 0 ? eb(ref, "in", ancestors) : sql<SqlBool>`1 = 0`);
  }
  if (filter.inRoot) out.push(eb(eb.fn("length", [ref]), "=", uidLength(1 + columns.ownerSegments)));
  if (filter.ids && filter.ids.length > 0) out.push(eb(ref, "in", filter.ids));
  const roots = narrowVisibility(visible, filter);
  if (roots) out.push(visibilityCondition(eb, columns.uid, roots));
  return out;
}

/**
 * The visible subtrees still worth a condition under `filter`: undefined when
 * every row the filter can match is visible anyway.
 */
export function narrowVisibility(visible: Visibility, filter: UidpFilter): Visibility {
  if (!visible) return undefined;
  const scope = filter.childrenOf ?? filter.descendantsOf;
  if (!scope) return visible;
  if (visible.some((root) => isSelfOrDescendant(scope, root))) return undefined;
  return visible.filter((root) => isDescendant(root, scope));
}

/** Condition restricting the uid column to the visible subtrees (each root and everything below it). */
function visibilityCondition(eb: ExpressionBuilder<any, any>, column: string, visible: string[]): Expression<SqlBool> {
  if (visible.length === 0) return sql<SqlBool>`1 = 0`;
  const ref = eb.ref(column);
  return eb.or(
    visible.map((root) => {
      const { low, high } = descendantRange(root);
      return eb.or([eb(ref, "=", root), eb.and([eb(ref, ">=", low), eb(ref, "<", high)])]);
    }),
  );
}

/**
 * `ref` contains `text` (`%`, `_` and `\\` literal). SQLite's LIKE ignores ASCII case and
 * PostgreSQL's does not: to match alike on both, compare lower-cased sides.
 */
export function containsText(ref: Expression<string>, text: string): Expression<SqlBool> {
  const pattern = `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
  return sql<SqlBool>`${ref} like ${pattern} escape '\\'`;
}

/**
 * Orders by `page.order`, resumes after `page.after` (keyset), then skips and
 * limits to `limit + 1` rows so the caller can tell whether another page exists.
 * Order columns are qualified with `table`.
 */
export function applyPage<O>(query: AnyQuery<O>, page: Page, table: string): AnyQuery<O> {
  let q = query;
  const after = page.after;
  if (after) {
    q = q.where((eb) =>
      eb.or(
        page.order.map((key, i) =>
          eb.and([
            ...page.order.slice(0, i).map((prev, j) => eb(eb.ref(`${table}.${prev.column}`), "=", after[j])),
            eb(eb.ref(`${table}.${key.column}`), key.desc ? "<" : ">", after[i]),
          ]),
        ),
      ),
    );
  }
  for (const key of page.order) q = q.orderBy(`${table}.${key.column}`, key.desc ? "desc" : "asc");
  return q.offset(page.skip).limit(page.limit + 1);
}

/**
 * How many rows `query` matches: one `count(*)`, a number on both backends; or `known` without a
 * query when the page token carried the total of its first page (`Page.total`, AIP-158).
 */
export async function countRows(query: AnyQuery<any>, known: number | undefined): Promise<number> {
  if (known !== undefined) return known;
  // On SQLite, the count is cached until the database changes (the results the driver caches for CACHEABLE_READ).
  const row = await query.select(sql<number>`count(*)`.as("total")).modifyEnd(sql.raw(CACHEABLE_READ)).executeTakeFirstOrThrow();
  return Number((row as { total: number | string }).total);
}
