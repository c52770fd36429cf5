import { createHash } from "node:crypto";
import { create, type DescMessage, type MessageInitShape, type MessageShape } from "@bufbuild/protobuf";
import { EmptySchema, type Empty } from "@bufbuild/protobuf/wkt";
import type { HandlerContext } from "@connectrpc/connect";
import type { Kysely } from "kysely";
import { visibilityKey } from "../../access/principal.js";
import type { ListScope } from "./list-query.js";
import type { Database, Db } from "./schema.js";
import { inTransaction } from "../../store/transaction.js";
import { markCachedAnswer } from "../../aip/cached-answer.js";
import { readCachedPage, type ListRequestFields } from "../../aip/list.js";
import { isCached, cachedDerivation } from "../../store/cached-reads.js";
import type { Page, Pager, Orderable } from "../../aip/pagination.js";
import { Violations } from "../../aip/validation.js";

/**
 * The bodies of the standard methods a resource's handlers share: Get and Delete by uid and
 * List (spec 4.1). A handler that does more (hydration, extra checks) writes its own body
 * from the same parts (`Violations`, `readCachedPage`, `inTransaction`).
 */

/**
 * Get (AIP-131): checks `uid` (INVALID_ARGUMENT), reads it (`read` throws NOT_FOUND) and maps the
 * row. `map` (a module-level function of the row alone) runs once per cached row: while the row a
 * read answered is cached (`cachedWith`: SQLite, nothing written since), the same answer is answered
 * again, marked so each wire encodes it once (`markCachedAnswer`).
 */
export async function getMethod<Row extends object, Item extends object>(uid: string, read: (uid: string) => Promise<Row>, map: (row: Row) => Item): Promise<Item> {
  new Violations().uid("uid", uid).throwIfAny();
  const row = await read(uid);
  return isCached(row) ? cachedDerivation(row, map, () => markCachedAnswer(map(row))) : map(row);
}

/** Delete (AIP-135): checks `uid`, runs `remove` in a transaction (it throws NOT_FOUND), answers Empty. */
export async function deleteMethod(
  db: Kysely<Database>,
  ctx: HandlerContext,
  uid: string,
  remove: (trx: Db, uid: string) => Promise<void>,
): Promise<Empty> {
  new Violations().uid("uid", uid).throwIfAny();
  await inTransaction(db, ctx.signal, (trx) => remove(trx, uid));
  return create(EmptySchema);
}

/**
 * Delete (AIP-135) where deleting is idempotent: checks `uid`, runs `remove` in a transaction
 * (it answers whether a row was deleted) and answers Empty either way, so a second delete, or
 * one of a uid that never existed, succeeds too. Authorization ran before (a caller without the
 * capability on the uid's scope is still refused). A delete that deleted nothing writes no event.
 */
export async function idempotentDeleteMethod(
  db: Kysely<Database>,
  ctx: HandlerContext,
  uid: string,
  remove: (trx: Db, uid: string) => Promise<boolean>,
): Promise<Empty> {
  new Violations().uid("uid", uid).throwIfAny();
  await inTransaction(db, ctx.signal, (trx) => remove(trx, uid), { changed: (deleted) => deleted });
  return create(EmptySchema);
}

/** The element type of repeated field `K` of message `Res`. */
type ItemOf<Res extends DescMessage, K extends keyof MessageInitShape<Res>> = NonNullable<MessageInitShape<Res>[K]> extends readonly (infer E)[] ? E : never;

/**
 * List (AIP-132, spec 4.1): one page through `readCachedPage` (the uidp filter, paging fields and
 * `validate` checked together), `read` given the caller's visibility from the authorization
 * interceptor; the response is `response` with the items under `items` and the envelope fields.
 */
export async function listMethod<Req extends DescMessage, Res extends DescMessage, K extends keyof MessageInitShape<Res> & string, Row extends { uid: string }>(
  ctx: HandlerContext,
  response: Res,
  items: K,
  options: {
    pager: Pager;
    schema: Req;
    request: MessageShape<Req> & ListRequestFields;
    orderable: Orderable;
    validate?: (violations: Violations) => void;
    read: (page: Page, scope: ListScope) => Promise<{ rows: Row[]; total: number }>;
    map: (row: Row) => ItemOf<Res, K>;
  },
): Promise<MessageShape<Res>> {
  const visible = ctx.values.get(visibilityKey);
  // The caller's visible subtrees decide which rows a total counts: a total is reused only for the same ones.
  const audience = visible === undefined ? "*" : createHash("sha256").update(visible.join(" ")).digest("base64url").slice(0, 22);
  // While the rows are cached (SQLite, nothing written since), so is the answer: built and encoded once.
  return readCachedPage({
    ...options,
    audience,
    read: (p, uidp) => options.read(p, { uidp, visible }),
    items: async (rows) => rows.map(options.map),
    respond: (page) => create(response, { [items]: page.items, ...page } as unknown as MessageInitShape<Res>),
  });
}
