import { sql, type Expression, type ExpressionBuilder, type SelectQueryBuilder, type SqlBool } from "kysely";
import type { Page } from "../api/pagination.js";
import { ancestorsOf, descendantRange, uidLength, type UidpFilter } from "../api/uidp.js";

export type { UidpFilter };


/**
 * Where a listing may look: the caller's visible subtrees. `undefined` means
 * unrestricted; an empty array means nothing is visible.
 */
export type Visibility = string[] | undefined;

type AnyQuery<O> = SelectQueryBuilder<any, any, O>;

/**
 * Conditions of a uidp filter on `column` (a uid column). `ownerSegments` is how
 * many segments separate a row's uid from its owning group (0 for groups), which
 * `in_root` needs.
 */
export function uidpConditions(
  eb: ExpressionBuilder<any, any>,
  column: string,
  filter: UidpFilter,
  ownerSegments: number,
): Expression<SqlBool>[] {
  const ref = eb.ref(column);
  const out: Expression<SqlBool>[] = [];
  if (filter.descendantsOf) {
    const { low, high } = descendantRange(filter.descendantsOf);
    out.push(eb.and([eb(ref, ">=", low), eb(ref, "<", high)]));
  }
  if (filter.childrenOf) {
    const { low, high } = descendantRange(filter.childrenOf);
    out.push(eb.and([eb(ref, ">=", low), eb(ref, "<", high), eb(eb.fn("length", [ref]), "=", filter.childrenOf.length + 17)]));
  }
  if (filter.ancestorsOf) {
    const ancestors = ancestorsOf(filter.ancestorsOf);
    out.push(ancestors.length > 0 ? eb(ref, "in", ancestors) : sql<SqlBool>`1 = 0`);
  }
  if (filter.inRoot) out.push(eb(eb.fn("length", [ref]), "=", uidLength(1 + ownerSegments)));
  if (filter.ids && filter.ids.length > 0) out.push(eb(ref, "in", filter.ids));
  return out;
}

/** Condition restricting `column` to the visible subtrees (each root and everything below it). */
export function visibilityCondition(eb: ExpressionBuilder<any, any>, column: string, visible: string[]): Expression<SqlBool> {
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
