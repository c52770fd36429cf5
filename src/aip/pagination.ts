import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from "node:crypto";
import { invalidField } from "./errors.js";

/**
 * The list machinery of spec 4.1, in one place: page size, encrypted page tokens
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
  /**
   * The listing's total as counted for its first page, carried by the page token (AIP-158 allows
   * a total computed once); undefined for a first page, which counts.
   */
  total?: number;
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
  /** The total counted for the first page of the listing, for callers who see what `v` names. */
  n?: number;
  /** The audience of `n`: what the caller who counted it could see (`PageAudience`). */
  v?: string;
}

/**
 * Who a listing's total was counted for: a key of what the caller could see (equal keys see the
 * same rows). A page token carries the total only with its audience, and a later page uses it only
 * for the same audience; without one, every page counts.
 */
export type PageAudience = string | undefined;

export interface Pager {
  /** Validates the list parameters; throws INVALID_ARGUMENT naming the failing field. */
  parse(req: PageRequest, orderable: Orderable, fingerprint: string, audience?: PageAudience): Page;
  /**
   * The next page token after `rows` (which may hold `limit + 1` rows), carrying `total`; "" on
   * the last page.
   */
  nextToken<Row>(page: Page, rows: Row[], keyOf: (row: Row, column: string) => string | number, fingerprint: string, total: number, audience?: PageAudience): string;
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

const TOKEN_VERSION = 1;
const IV_BYTES = 12;
const TAG_BYTES = 16;
const MAX_TOKEN_LENGTH = 4096;

/**
 * Page tokens are AES-256-GCM sealed (AIP-158: opaque, revealing nothing of the position or the
 * filter): base64url(version 1 | 12-byte nonce | ciphertext | 16-byte tag) of the JSON payload,
 * under a key derived from `secret`. A token that does not open is INVALID_ARGUMENT.
 */
export function createPager(options: { secret: Uint8Array; now?: () => number }): Pager {
  const now = options.now ?? Date.now;
  const key = Buffer.from(hkdfSync("sha256", options.secret, Buffer.alloc(0), "platform-api page tokens v1", 32));

  function seal(payload: TokenPayload): string {
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv("aes-256-gcm", key, iv);
    const sealed = Buffer.concat([cipher.update(JSON.stringify(payload), "utf8"), cipher.final()]);
    return Buffer.concat([Buffer.of(TOKEN_VERSION), iv, sealed, cipher.getAuthTag()]).toString("base64url");
  }

  function open(token: string): TokenPayload {
    const bad = () => invalidField("page_token", "is not a page token issued by this server");
    if (token.length > MAX_TOKEN_LENGTH || !/^[A-Za-z0-9_-]+$/.test(token)) throw bad();
    const bytes = Buffer.from(token, "base64url");
    if (bytes.length < 1 + IV_BYTES + TAG_BYTES + 2 || bytes[0] !== TOKEN_VERSION) throw bad();
    try {
      const decipher = createDecipheriv("aes-256-gcm", key, bytes.subarray(1, 1 + IV_BYTES));
      decipher.setAuthTag(bytes.subarray(bytes.length - TAG_BYTES));
      const plain = Buffer.concat([decipher.update(bytes.subarray(1 + IV_BYTES, bytes.length - TAG_BYTES)), decipher.final()]);
      return JSON.parse(plain.toString("utf8")) as TokenPayload;
    } catch {
      throw bad();
    }
  }

  function decode(token: string, fingerprint: string): TokenPayload | undefined {
    const payload = open(token);
    if (payload.f !== fingerprint) {
      throw invalidField("page_token", "belongs to a request with other filters or order; start again without it");
    }
    if (now() - payload.t > PAGE_TOKEN_LIFETIME_MS) return undefined;
    return payload;
  }

  return {
    parse(req, orderable, fingerprint, audience) {
      if (req.pageSize < 0) throw invalidField("page_size", "must not be negative");
      if (req.skip < 0) throw invalidField("skip", "must not be negative");
      if (req.skip > MAX_SKIP) throw invalidField("skip", `must be at most ${MAX_SKIP}`);
      const order = parseOrderBy(req.orderBy, orderable);
      const limit = req.pageSize === 0 ? DEFAULT_PAGE_SIZE : Math.min(req.pageSize, MAX_PAGE_SIZE);
      const payload = req.pageToken === "" ? undefined : decode(req.pageToken, fingerprint);
      if (payload && payload.k.length !== order.length) {
        throw invalidField("page_token", "does not fit this request's order");
      }
      const carried = audience !== undefined && payload?.v === audience && Number.isSafeInteger(payload.n) && payload.n! >= 0;
      const total = carried ? payload.n : undefined;
      return { limit, skip: req.skip, order, after: payload?.k, total };
    },
    nextToken(page, rows, keyOf, fingerprint, total, audience) {
      if (rows.length <= page.limit) return "";
      const last = rows[page.limit - 1];
      return seal({ f: fingerprint, t: now(), k: page.order.map((o) => keyOf(last, o.column)), ...(audience === undefined ? {} : { n: total, v: audience }) });
    },
  };
}
