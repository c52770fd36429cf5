// Outcomes of layers already read, kept between images: a base layer many images share, or one
// layer every platform of an index lists, is read once while it stays here. Layers are named by
// digest, so an outcome never goes stale; what is kept is bounded in entries and in the bytes of
// wanted files held.
import { changesBytes, type LayerCache, type LayerOutcome } from "./layers.js";

export interface LayerCacheOptions {
  /** Most outcomes kept. */
  maxEntries?: number;
  /** Most bytes of wanted files the kept outcomes hold; an outcome holding more is not kept. */
  maxBytes?: number;
}

export const LAYER_CACHE_DEFAULTS = { maxEntries: 1024, maxBytes: 32 * 1024 * 1024 };

/** A least-recently-used cache of layer outcomes within the bounds of `options`. */
export function createLayerCache(options: LayerCacheOptions = {}): LayerCache {
  const { maxEntries, maxBytes } = { ...LAYER_CACHE_DEFAULTS, ...options };
  const entries = new Map<string, { outcome: LayerOutcome; bytes: number }>();
  let held = 0;
  const drop = (key: string) => {
    const entry = entries.get(key);
    if (entry === undefined) return;
    entries.delete(key);
    held -= entry.bytes;
  };
  return {
    get(key) {
      const entry = entries.get(key);
      if (entry === undefined) return undefined;
      entries.delete(key);
      entries.set(key, entry);
      return entry.outcome;
    },
    set(key, outcome) {
      drop(key);
      const bytes = "error" in outcome ? 0 : changesBytes(outcome.changes);
      if (bytes > maxBytes || maxEntries <= 0) return;
      entries.set(key, { outcome, bytes });
      held += bytes;
      for (const oldest of entries.keys()) {
        if (held <= maxBytes && entries.size <= maxEntries) break;
        drop(oldest);
      }
    },
  };
}
