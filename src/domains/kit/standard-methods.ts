import { createHash } from "node:crypto";
import { create, type DescMessage, type Message, type MessageInitShape, type MessageShape } from "@bufbuild/protobuf";
import { EmptySchema, type Empty, type FieldMask } from "@bufbuild/protobuf/wkt";
import type { GenMessage } from "@bufbuild/protobuf/codegenv2";
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
import { applyFieldMask } from "../../aip/field-mask.js";

/**
 * The bodies of the standard methods a resource's handlers share: Get and Delete by uid and
 * List (spec 4.1), and the checks that open Create and Update (`checkedCreate`, `checkedPatch`,
 * `checkedUpdate`), whose writes stay the handler's. A handler that does more (hydration, extra
 * checks) writes its own body from the same parts (`Violations`, `readCachedPage`, `inTransaction`).
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
 * interceptor. `rpc` names the request's schema (`input`, e.g. the service's
 * `method.listThings`) and the response's (`output`), which answers the items under `items`
 * and the envelope fields.
 */
export async function listMethod<Req extends DescMessage, Res extends DescMessage, K extends keyof MessageInitShape<Res> & string, Row extends { uid: string }>(
  ctx: HandlerContext,
  pager: Pager,
  rpc: { input: Req; output: Res },
  request: MessageShape<Req> & ListRequestFields,
  items: K,
  options: {
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
    pager,
    schema: rpc.input,
    request,
    audience,
    read: (p, uidp) => options.read(p, { uidp, visible }),
    items: async (rows) => rows.map(options.map),
    respond: (page) => create(rpc.output, { [items]: page.items, ...page } as unknown as MessageInitShape<Res>),
  });
}

/**
 * The `name` filter of a List (an exact name; `rule` its length and pattern) as `listMethod`'s
 * `validate` and `read`: `read` is given the caller's scope with the name, when the request names one.
 */
export function nameFilter<Row extends { uid: string }>(
  name: string,
  rule: { max: number; pattern?: RegExp },
  read: (filter: ListScope & { name?: string }, page: Page) => Promise<{ rows: Row[]; total: number }>,
): { validate: (violations: Violations) => void; read: (page: Page, scope: ListScope) => Promise<{ rows: Row[]; total: number }> } {
  return {
    validate: (v) => v.text("name", name, rule),
    read: (page, scope) => read({ name: name || undefined, ...scope }, page),
  };
}

/**
 * Create (AIP-133), before its write: the request's resource (`given`, or an empty one), with
 * `parent` checked and `check` adding the violations of its fields; throws INVALID_ARGUMENT naming
 * all of them. Answers the resource and what `check` answered (e.g. the values it parsed).
 */
export function checkedCreate<M extends Message, Checked>(
  schema: GenMessage<M>,
  given: M | undefined,
  parent: string,
  check: (violations: Violations, resource: M) => Checked,
): [M, Checked] {
  const resource = given ?? create(schema);
  const violations = new Violations().parent("parent", parent);
  const checked = check(violations, resource);
  violations.throwIfAny();
  return [resource, checked];
}

/**
 * Update (AIP-134), before reading the stored resource: the request's patch (`given`, or an
 * empty one), its uid checked under `<field>.uid` (INVALID_ARGUMENT).
 */
export function checkedPatch<M extends Message & { uid: string }>(schema: GenMessage<M>, given: M | undefined, field: string): M {
  const patch = given ?? create(schema);
  new Violations().uid(`${field}.uid`, patch.uid).throwIfAny();
  return patch;
}

/**
 * Update (AIP-134), once the stored resource is read: `current` with `patch` applied under the
 * request's `mask` (`applyFieldMask`; `updatable` the paths it may change), and `check`
 * adding the violations of the result; throws INVALID_ARGUMENT naming all of them. Answers the
 * result and what `check` answered.
 */
export function checkedUpdate<M extends Message, Checked>(
  schema: GenMessage<M>,
  current: M,
  patch: M,
  mask: FieldMask | undefined,
  updatable: readonly string[],
  check: (violations: Violations, next: M) => Checked,
): [M, Checked] {
  const next = applyFieldMask(schema, current, patch, mask, updatable);
  const violations = new Violations();
  const checked = check(violations, next);
  violations.throwIfAny();
  return [next, checked];
}
