import { createHash } from "node:crypto";
import { clone, ScalarType, toBinary, type DescMessage, type MessageShape } from "@bufbuild/protobuf";
import { MAX_PAGE_SIZE, type Orderable, type Page, type PageAudience, type Pager } from "./pagination.js";
import type { UidpFilter } from "./uidp.js";
import { isCached, cacheValue, cachedValue } from "../store/cached-reads.js";
import { markCachedAnswer } from "./cached-answer.js";
import { Violations } from "./validation.js";

/** Request fields that may change between pages of one listing. */
const PAGING_FIELDS = new Set(["page_token", "page_size", "skip"]);

/**
 * A digest of a List request without its paging fields: a page token carries it
 * so that a token reused with other filters or order is refused.
 */
export function listFingerprint<Desc extends DescMessage>(schema: Desc, request: MessageShape<Desc>): string {
  const copy = clone(schema, request) as Record<string, unknown>;
  for (const field of schema.fields) {
    if (!PAGING_FIELDS.has(field.name)) continue;
    copy[field.localName] = field.fieldKind === "scalar" && field.scalar === ScalarType.STRING ? "" : 0;
  }
  return createHash("sha256")
    .update(schema.typeName)
    .update(toBinary(schema, copy as MessageShape<Desc>))
    .digest("base64url")
    .slice(0, 22);
}

/** The paging fields every List request and response shares (spec 4.1). */
export interface ListRequestFields {
  pageSize: number;
  pageToken: string;
  orderBy: string;
  skip: number;
  uidp?: { descendantsOf: string; childrenOf: string; ancestorsOf: string; inRoot: boolean; ids: string[] };
}

/** What reading a page needs, whether its answer is built each time (`readPage`) or cached (`readCachedPage`). */
interface PageOptions<Desc extends DescMessage, Row extends { uid: string }> {
  pager: Pager;
  schema: Desc;
  request: MessageShape<Desc> & ListRequestFields;
  orderable: Orderable;
  /** Extra request validation, run with the uidp checks so all failures are reported together. */
  validate?: (violations: Violations) => void;
  read: (page: Page, uidp: UidpFilter) => Promise<{ rows: Row[]; total: number }>;
  /** Who the total is counted for; with it, later pages reuse the first page's total (`PageAudience`). */
  audience?: PageAudience;
}

/** One page of items with the list envelope fields (spec 4.1). */
export interface PageEnvelope<Item> {
  items: Item[];
  nextPageToken: string;
  totalCount: bigint;
  skipped: number;
}

/**
 * Reads one page: validates the uidp filter and paging fields, calls `read`
 * (which must apply `page` and `filter`, returning up to `limit + 1` rows and the
 * total: `page.total` when set, which the first page's token carries on), and returns
 * the items with the list envelope fields.
 */
export async function readPage<Desc extends DescMessage, Row extends { uid: string }, Item>(
  options: PageOptions<Desc, Row> & { map: (row: Row) => Item },
): Promise<PageEnvelope<Item>> {
  const { page, fingerprint, rows, total } = await readRows(options);
  return envelope(options, page, fingerprint, rows, total, rows.slice(0, page.limit).map(options.map));
}

/** How long a cached List answer is answered again at most: its page token carries its issue time. */
export const CACHED_ANSWER_MAX_AGE_MS = 60_000;

/**
 * `readPage` for a List whose answer depends on nothing but the request and the rows `read`
 * returns: while the store caches those rows (`cachedDerivation`: SQLite, nothing written since),
 * the same request is answered with the same message, built once by `items` and `respond` and
 * marked by `markCachedAnswer` so each wire encodes it once. Never longer than
 * CACHED_ANSWER_MAX_AGE_MS. The answer may depend on the caller only through the rows `read`
 * returns (its visible subtrees narrow the query) and `audience`.
 */
export async function readCachedPage<Desc extends DescMessage, Row extends { uid: string }, Item, Answer extends object>(
  options: PageOptions<Desc, Row> & {
    /** The page's items for its rows (the first `limit` of what `read` returned). */
    items: (rows: Row[]) => Promise<Item[]>;
    respond: (page: PageEnvelope<Item>) => Answer;
  },
): Promise<Answer> {
  const { page, fingerprint, rows, total } = await readRows(options);
  const name = `list answer ${options.schema.typeName} ${fingerprint} ${total} ${options.audience ?? "*"}`;
  const cached = cachedValue<Answer>(rows, name, CACHED_ANSWER_MAX_AGE_MS);
  if (cached !== undefined) return cached;
  const answer = options.respond(envelope(options, page, fingerprint, rows, total, await options.items(rows.slice(0, page.limit))));
  return isCached(rows) ? cacheValue(rows, name, markCachedAnswer(answer)) : answer;
}

async function readRows<Desc extends DescMessage, Row extends { uid: string }>(options: PageOptions<Desc, Row>) {
  const { pager, schema, request } = options;
  const violations = new Violations();
  const uidp = uidpFilterOf(request.uidp, violations);
  options.validate?.(violations);
  violations.throwIfAny();
  const fingerprint = listFingerprint(schema, request);
  const page = pager.parse(request, options.orderable, fingerprint, options.audience);
  const { rows, total } = await options.read(page, uidp);
  return { page, fingerprint, rows, total };
}

function envelope<Row, Item>(options: PageOptions<DescMessage, { uid: string }>, page: Page, fingerprint: string, rows: Row[], total: number, items: Item[]): PageEnvelope<Item> {
  const nextPageToken = options.pager.nextToken(page, rows, (row, column) => (row as Record<string, string | number>)[column], fingerprint, total, options.audience);
  return { items, nextPageToken, totalCount: BigInt(total), skipped: options.request.skip };
}

function uidpFilterOf(uidp: ListRequestFields["uidp"], violations: Violations): UidpFilter {
  if (!uidp) return {};
  violations.uid("uidp.descendants_of", uidp.descendantsOf, false);
  violations.uid("uidp.children_of", uidp.childrenOf, false);
  violations.uid("uidp.ancestors_of", uidp.ancestorsOf, false);
  if (uidp.ids.length > MAX_PAGE_SIZE) violations.add("uidp.ids", `must hold at most ${MAX_PAGE_SIZE} uids`);
  uidp.ids.forEach((id, i) => violations.uid(`uidp.ids[${i}]`, id));
  return {
    descendantsOf: uidp.descendantsOf || undefined,
    childrenOf: uidp.childrenOf || undefined,
    ancestorsOf: uidp.ancestorsOf || undefined,
    inRoot: uidp.inRoot,
    ids: uidp.ids,
  };
}
