import type { Advisory } from "../../../gen/platform/vulnerabilities/v2/advisory_pb.js";
import type { Db } from "../kit/schema.js";
import { advisoryFromRow } from "./advisory-mapper.js";
import { servedAdvisories, type AdvisoryKey } from "./store/advisories.js";

/** Advisory messages a server caches by default: about 1 kB each. */
export const ADVISORY_CACHE_SIZE = 20_000;

/**
 * Advisory messages by uid, each cached with the etag of the row it was mapped from, the last
 * `limit` used. A message stands only for that etag: a row written anew has a new one, so a
 * message is never served for content it was not made from, whichever process wrote the row.
 * Messages are shared between responses: callers must not change them.
 */
export interface AdvisoryCache {
  /**
   * The messages of `keys` by uid: cached ones as they are, the others read in one query and
   * mapped. A key whose advisory is gone or withdrawn since the keys were read has none.
   */
  messages(db: Db, keys: readonly AdvisoryKey[]): Promise<Map<string, Advisory>>;
}

export function createAdvisoryCache(limit = ADVISORY_CACHE_SIZE): AdvisoryCache {
  const cached = new Map<string, { etag: string; message: Advisory }>();

  /** Caches `entry` as the most recently used; past `limit`, the least recently used goes. */
  function put(uid: string, entry: { etag: string; message: Advisory }) {
    cached.delete(uid);
    cached.set(uid, entry);
    if (cached.size > limit) cached.delete(cached.keys().next().value as string);
  }

  return {
    async messages(db, keys) {
      const found = new Map<string, Advisory>();
      const missing: string[] = [];
      for (const { uid, etag } of keys) {
        const entry = cached.get(uid);
        if (entry?.etag === etag) {
          put(uid, entry);
          found.set(uid, entry.message);
        } else missing.push(uid);
      }
      for (const row of await servedAdvisories(db, missing)) {
        const message = advisoryFromRow(row);
        put(row.uid, { etag: row.etag, message });
        found.set(row.uid, message);
      }
      return found;
    },
  };
}
