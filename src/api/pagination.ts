import { createHmac, timingSafeEqual } from "node:crypto";
import { invalidField } from "./errors.js";

/**
 * The list machinery of spec 4.1, in one place: page size, signed page tokens
 * bound to the request, `order_by` against an allow-list, `skip`.
 */

export const DEFAULT_PAGE_SIZE = 50;
export const MAX_PAGE_SIZE = 200;
export const MAX_SKIP = 1_000_000;
/** Tokens older than this restart the listing from the first page, without an error. */
export const PAGE_TOKEN_LIFETIME_MS = 3 * 24 * 60 * 60 * 1000;

export interface PageRequest {
  pageSize: number;
  pageToken: string;
  orderBy: string;
  skip: number;
}

export interface OrderKey {
  /** Column name in the store. */
  column: string;
  desc: boolean;
}

/** What a repository needs to read one page. */
export interface Page {
  /** Rows to return; repositories fetch `limit + 1` to learn whether more exist. */
  limit: number;
  skip: number;
  /** Sort keys, always ending with `uid` as the tie-breaker. */
  order: OrderKey[];
  /** Values of `order` of the last row of the previous page; undefined for the first page. */
  after?: Array<string | number>;
}

/**
 * Sortable fields of one resource: API name (and aliases) to column. `uid` is
 * always sortable and is the default.
 */
export type Orderable = Record<string, string>;

interface TokenPayload {
  /** Fingerprint of the request that made the token. */
  f: string;
  /** Issue time, epoch ms. */
  t: number;
  /** Values of the order keys of the last row returned. */
  k: Array<string | number>;
}

export interface Pager {
  /** Validates the list parameters; throws INVALID_ARGUMENT naming the failing field. */
  parse(req: PageRequest, orderable: Orderable, fingerprint: string): Page;
  /** The next page token after `rows` (which may hold `limit + 1` rows); "" on the last page. */
  nextToken<Row>(page: Page, rows: Row[], keyOf: (row: Row, column: string) => string | number, fingerprint: string): string;
}

export function parseOrderBy(orderBy: string, orderable: Orderable): OrderKey[] {
  const keys: OrderKey[] = [];
  const seen = new Set<string>();
  if (orderBy.trim() !== "") {
    for (const part of orderBy.split(",")) {
      const words = part.trim().split(/\s+/);
      const [name, direction, ...rest] = words;
      const column = name === "uid" ? "uid" : orderable[name ?? ""];
      if (!column || rest.length > 0 || (direction !== undefined && !/^(asc|desc)$/i.test(direction))) {
        const allowed = ["uid", ...Object.keys(orderable)].join(", ");
        throw invalidField("order_by", `"${part.trim()}" is not a sort key; use one of ${allowed}, each optionally followed by asc or desc`);
      }
      if (seen.has(column)) throw invalidField("order_by", `"${name}" is listed twice`);
      seen.add(column);
      keys.push({ column, desc: direction?.toLowerCase() === "desc" });
    }
  }
  if (!seen.has("uid")) keys.push({ column: "uid", desc: false });
  return keys;
}

export function createPager(options: { secret: Uint8Array; now?: () => number }): Pager {
  const now = options.now ?? Date.now;
  const sign = (body: string) =>
    createHmac("sha256", options.secret).update(body).digest().subarray(0, 18).toString("base64url");

  function decode(token: string, fingerprint: string): TokenPayload | undefined {
    const [body, mac, extra] = token.split(".");
    const bad = () => invalidField("page_token", "is not a page token issued by this server");
    if (!body || !mac || extra !== undefined || token.length > 4096) throw bad();
    const expected = Buffer.from(sign(body));
    const given = Buffer.from(mac);
    if (expected.length !== given.length || !timingSafeEqual(expected, given)) throw bad();
    const payload = JSON.parse(Buffer.from(body, "base64url").toString("utf8")) as TokenPayload;
    if (payload.f !== fingerprint) {
      throw invalidField("page_token", "belongs to a request with other filters or order; start again without it");
    }
    if (now() - payload.t > PAGE_TOKEN_LIFETIME_MS) return undefined;
    return payload;
  }

  return {
    parse(req, orderable, fingerprint) {
      if (req.pageSize < 0) throw invalidField("page_size", "must not be negative");
      if (req.skip < 0) throw invalidField("skip", "must not be negative");
      if (req.skip > MAX_SKIP) throw invalidField("skip", `must be at most ${MAX_SKIP}`);
      const order = parseOrderBy(req.orderBy, orderable);
      const limit = req.pageSize === 0 ? DEFAULT_PAGE_SIZE : Math.min(req.pageSize, MAX_PAGE_SIZE);
      const payload = req.pageToken === "" ? undefined : decode(req.pageToken, fingerprint);
      if (payload && payload.k.length !== order.length) {
        throw invalidField("page_token", "does not fit this request's order");
      }
      return { limit, skip: req.skip, order, after: payload?.k };
    },
    nextToken(page, rows, keyOf, fingerprint) {
      if (rows.length <= page.limit) return "";
      const last = rows[page.limit - 1];
      const payload: TokenPayload = { f: fingerprint, t: now(), k: page.order.map((o) => keyOf(last, o.column)) };
      const body = Buffer.from(JSON.stringify(payload)).toString("base64url");
      return `${body}.${sign(body)}`;
    },
  };
}
