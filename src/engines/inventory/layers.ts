// Reads the few files an inventory needs out of an image's layers, streaming: each distinct layer is
// decompressed and walked once (tar-stream), every other entry skipped unread, and only the wanted
// files are held, each bounded. Layers apply in order with the OCI image spec's whiteouts: a later
// layer's `.wh.<name>` removes `<name>` (and what lies below it) from the layers before it, and
// `.wh..wh..opq` empties its directory of them. A layer listed twice is read once and its changes
// applied at each place it is listed.
import { posix } from "node:path";
import { Transform, type Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { extract as tarExtract } from "tar-stream";
import { decompressed } from "./decompress.js";
import { InventoryError, stopReason } from "./errors.js";
import { DEFAULT_MAX_ZSTD_WINDOW_BYTES } from "./zstd-frames.js";

export interface LayerInput {
  /** For messages: `sha256:...`. */
  digest: string;
  /** The layer's bytes as stored (compressed or not). */
  open(): Readable;
}

export interface LayerLimits {
  /** Most filesystem layers one image may list (a layer listed twice counts twice). */
  maxLayers: number;
  /** Most bytes the distinct layers of one image may decompress to together. */
  maxImageBytes: number;
  /** Largest wanted file read, bytes. */
  maxFileBytes: number;
  /** Most bytes one layer may decompress to (bounds a compression bomb's work). */
  maxLayerBytes: number;
  /** Most wanted files held at once (lockfiles across a large tree). */
  maxFiles: number;
  /** Most bytes of wanted files held at once. */
  maxTotalBytes: number;
  /** Largest window a zstd frame may declare (what its decoder allocates, from the header alone). */
  maxZstdWindowBytes: number;
}

export const DEFAULT_LAYER_LIMITS: LayerLimits = {
  maxLayers: 500,
  maxImageBytes: 64 * 1024 ** 3,
  maxFileBytes: 64 * 1024 * 1024,
  maxLayerBytes: 64 * 1024 ** 3,
  maxFiles: 2000,
  maxTotalBytes: 256 * 1024 * 1024,
  maxZstdWindowBytes: DEFAULT_MAX_ZSTD_WINDOW_BYTES,
};

const EXACT = new Set(["lib/apk/db/installed", "var/lib/dpkg/status", "etc/os-release", "usr/lib/os-release"]);

/**
 * The paths an inventory reads: the apk and dpkg databases, `var/lib/dpkg/status.d/<package>`
 * (not its `.md5sums`), the os-release files, and every `package-lock.json` and `Cargo.lock`
 * outside `node_modules` (npm's hidden `node_modules/.package-lock.json` included).
 */
export function isWantedPath(path: string): boolean {
  if (EXACT.has(path)) return true;
  if (path.startsWith("var/lib/dpkg/status.d/")) {
    const name = path.slice("var/lib/dpkg/status.d/".length);
    return name !== "" && !name.includes("/") && !name.endsWith(".md5sums");
  }
  const base = posix.basename(path);
  if (base === ".package-lock.json") return path === "node_modules/.package-lock.json" || path.endsWith("/node_modules/.package-lock.json");
  if (base !== "package-lock.json" && base !== "Cargo.lock") return false;
  return !path.split("/").slice(0, -1).includes("node_modules");
}

/**
 * The entry's path relative to the image root: `./` and leading `/`-free. Throws InventoryError
 * for an absolute path or one with a `..` component: a layer that writes outside its root is
 * refused, not interpreted.
 */
export function entryPath(name: string, layer: string): string {
  if (name.startsWith("/")) throw new InventoryError(`layer ${layer}: the entry ${JSON.stringify(name.slice(0, 200))} has an absolute path`);
  const parts = name.split("/").filter((p) => p !== "" && p !== ".");
  if (parts.includes("..")) throw new InventoryError(`layer ${layer}: the entry ${JSON.stringify(name.slice(0, 200))} has a .. component`);
  return parts.join("/");
}

const under = (path: string, dir: string) => dir === "" || path === dir || path.startsWith(`${dir}/`);

async function readEntry(stream: Readable, limit: number, path: string, layer: string): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of stream) {
    size += (chunk as Buffer).length;
    if (size > limit) throw new InventoryError(`layer ${layer}: ${path} is larger than ${limit} bytes`);
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks);
}

/** One layer's effect: what it removes from the layers below, and the wanted files it writes. */
export interface LayerChanges {
  removed: string[];
  opaque: string[];
  written: Map<string, Buffer | null>;
}

/**
 * What reading one layer under given per-layer limits comes to, whenever it is read: its changes
 * and the bytes it decompresses to, or the error its bytes earn.
 */
export type LayerOutcome = { changes: LayerChanges; bytes: number } | { error: InventoryError };

/** Where outcomes of layers already read are kept between images (`createLayerCache`). */
export interface LayerCache {
  get(key: string): LayerOutcome | undefined;
  set(key: string, outcome: LayerOutcome): void;
}

/** The cache key of a layer read under `limits`: its digest and the limits that decide its outcome. */
const cacheKey = (digest: string, limits: LayerLimits) => `${digest} ${limits.maxFileBytes} ${limits.maxLayerBytes} ${limits.maxFiles} ${limits.maxTotalBytes} ${limits.maxZstdWindowBytes}`;

/** Bytes of wanted files a layer's changes hold. */
export function changesBytes(changes: LayerChanges): number {
  let total = 0;
  for (const content of changes.written.values()) total += content?.length ?? 0;
  return total;
}

/** What reading one layer's bytes came to. */
export interface LayerBytesRead {
  outcome: LayerOutcome;
  /** The limit that cut the read short was the image's remaining budget, not the layer's own limit. */
  overBudget: boolean;
}

/**
 * Reads one layer's bytes as stored (`source`, which it consumes and destroys on failure) with at
 * most `limit` decompressed bytes: its changes and the bytes it decompressed to, or the
 * InventoryError its bytes earn (`signal`'s reason once it is aborted). Never rejects.
 */
export async function readLayerBytes(source: Readable, digest: string, limits: LayerLimits, limit: number, signal?: AbortSignal): Promise<LayerBytesRead> {
  const changes: LayerChanges = { removed: [], opaque: [], written: new Map() };
  let held = 0;
  let stream: Readable | undefined;
  const onAbort = () => {
    const reason = stopReason(signal!);
    source.destroy(reason);
    stream?.destroy(reason);
  };
  signal?.addEventListener("abort", onAbort, { once: true });
  try {
    let compression: string;
    try {
      ({ stream, compression } = await decompressed(source, { maxZstdWindowBytes: limits.maxZstdWindowBytes, name: `layer ${digest}` }));
    } catch (error) {
      if (signal?.aborted) return { outcome: { error: stopReason(signal) }, overBudget: false };
      return { outcome: { error: new InventoryError(`layer ${digest} cannot be read: ${(error as Error).message}`) }, overBudget: false };
    }
    const extract = tarExtract();
    let total = 0;
    let overBudget = false;
    const counter = new Transform({
      transform(chunk: Buffer, _encoding, callback) {
        total += chunk.length;
        if (total > limit) {
          overBudget = limit < limits.maxLayerBytes;
          callback(
            new InventoryError(
              overBudget ? `the image's layers decompress to more than ${limits.maxImageBytes} bytes` : `layer ${digest} decompresses to more than ${limits.maxLayerBytes} bytes`,
            ),
          );
        } else if (signal?.aborted) callback(stopReason(signal));
        else callback(null, chunk);
      },
    });
    // Errors of the source, the decompressor or the counter reach `extract`, and so the loop below.
    const feeding = pipeline(stream, counter, extract).catch(() => {});
    try {
      for await (const entry of extract) {
        const header = entry.header;
        const path = entryPath(header.name, digest);
        const base = posix.basename(path);
        if (base.startsWith(".wh.")) {
          const dir = posix.dirname(path) === "." ? "" : posix.dirname(path);
          if (base === ".wh..wh..opq") changes.opaque.push(dir);
          else changes.removed.push(dir === "" ? base.slice(4) : `${dir}/${base.slice(4)}`);
          entry.resume();
          continue;
        }
        if (!isWantedPath(path)) {
          entry.resume();
          continue;
        }
        if (header.type === "file" || header.type === "contiguous-file") {
          if (!changes.written.has(path) && changes.written.size >= limits.maxFiles) {
            throw new InventoryError(`layer ${digest}: more than ${limits.maxFiles} package databases and lockfiles`);
          }
          const content = await readEntry(entry, limits.maxFileBytes, path, digest);
          held += content.length;
          if (held > limits.maxTotalBytes) throw new InventoryError(`layer ${digest}: package databases and lockfiles exceed ${limits.maxTotalBytes} bytes`);
          changes.written.set(path, content);
        } else {
          // A link or directory where a wanted file was: the file is gone from this layer on.
          changes.written.set(path, null);
          entry.resume();
        }
      }
    } catch (error) {
      source.destroy();
      stream.destroy();
      extract.destroy();
      await feeding;
      if (signal?.aborted) return { outcome: { error: stopReason(signal) }, overBudget };
      if (error instanceof InventoryError) return { outcome: { error }, overBudget };
      const what = compression === "none" ? "tar" : `${compression}-compressed tar`;
      return { outcome: { error: new InventoryError(`layer ${digest} is not a valid ${what}: ${(error as Error).message}`) }, overBudget };
    }
    await feeding;
    if (signal?.aborted) return { outcome: { error: stopReason(signal) }, overBudget: false };
    return { outcome: { changes, bytes: total }, overBudget: false };
  } finally {
    signal?.removeEventListener("abort", onAbort);
  }
}

/**
 * Reads one layer with at most `budget` decompressed bytes (the image's remaining bytes, when fewer
 * than `limits.maxLayerBytes`). `lasting` tells whether the outcome would be the same on any other
 * read: false when the store failed to deliver the bytes, the read was stopped, or the image's budget
 * (not the layer's limit) cut it short. Rejects only for a failure of the reader itself (a scan
 * thread that crashed), never for the layer's bytes.
 */
export type LayerReader = (layer: LayerInput, limits: LayerLimits, budget: number, signal?: AbortSignal) => Promise<{ outcome: LayerOutcome; lasting: boolean }>;

/** A LayerReader that reads in this thread; never rejects. */
export const readLayerHere: LayerReader = async (layer, limits, budget, signal) => {
  if (signal?.aborted) return { outcome: { error: stopReason(signal) }, lasting: false };
  let source: Readable;
  try {
    source = layer.open();
  } catch (error) {
    return { outcome: { error: new InventoryError(`layer ${layer.digest} cannot be read: ${(error as Error).message}`) }, lasting: false };
  }
  let sourceFailed = false;
  source.once("error", () => (sourceFailed = true));
  const read = await readLayerBytes(source, layer.digest, limits, Math.min(limits.maxLayerBytes, budget), signal);
  if (signal?.aborted) return { outcome: { error: stopReason(signal) }, lasting: false };
  return { outcome: read.outcome, lasting: !sourceFailed && !read.overBudget };
};

/** One layer's outcome: from `cache` when it holds it, else read (and kept there when lasting). */
async function readLayer(layer: LayerInput, limits: LayerLimits, budget: number, options: ReadOptions): Promise<{ changes: LayerChanges; bytes: number }> {
  const key = cacheKey(layer.digest, limits);
  let outcome = options.cache?.get(key);
  if (outcome === undefined) {
    const read = await (options.reader ?? readLayerHere)(layer, limits, budget, options.signal);
    outcome = read.outcome;
    if (read.lasting) options.cache?.set(key, outcome);
  }
  if ("error" in outcome) throw outcome.error;
  return outcome;
}

export interface ReadOptions {
  /** Stops the reading: it throws the signal's reason when that is an InventoryError, else "the inventory was stopped". */
  signal?: AbortSignal;
  /** Outcomes of layers read for earlier images (one cache may serve any limits: they are part of its keys). */
  cache?: LayerCache;
  /** Reads each layer not in the cache; default `readLayerHere`, in this thread (`createScanThreads` reads on worker threads). */
  reader?: LayerReader;
}

/** Bytes of the distinct file contents `maps` hold between them. */
function heldBytes(maps: Iterable<ReadonlyMap<string, Buffer | null>>): number {
  const seen = new Set<Buffer>();
  let total = 0;
  for (const map of maps) {
    for (const content of map.values()) {
      if (content === null || seen.has(content)) continue;
      seen.add(content);
      total += content.length;
    }
  }
  return total;
}

/**
 * The wanted files of the image the layers make, in order of the layers (lowest first): each
 * path with the content of the last layer that wrote it, unless a later layer removed it. Each
 * distinct digest is read once (or taken from `options.cache`); a digest listed again has its
 * changes applied again at that place. Throws InventoryError naming the layer that could not be
 * read (not gzip/zstd/tar, truncated, an absolute or `..` path, a layer limit passed) or the image
 * limit passed (more than `maxLayers` layers, more than `maxImageBytes` decompressed between its
 * distinct layers, more wanted files or bytes than `maxFiles` and `maxTotalBytes` held at once).
 */
export async function readImageFiles(layers: LayerInput[], limits: Partial<LayerLimits> = {}, options: ReadOptions = {}): Promise<Map<string, Buffer>> {
  const bounded = { ...DEFAULT_LAYER_LIMITS, ...limits };
  if (layers.length > bounded.maxLayers) throw new InventoryError(`the image lists ${layers.length} layers, more than ${bounded.maxLayers}`);
  const last = new Map<string, number>();
  layers.forEach((layer, i) => last.set(layer.digest, i));
  /** Changes of layers read already and listed again further on. */
  const again = new Map<string, LayerChanges>();
  const files = new Map<string, Buffer>();
  let bytes = 0;
  for (const [i, layer] of layers.entries()) {
    let changes = again.get(layer.digest);
    if (changes === undefined) {
      const read = await readLayer(layer, bounded, bounded.maxImageBytes - bytes, options);
      bytes += read.bytes;
      if (bytes > bounded.maxImageBytes) throw new InventoryError(`the image's layers decompress to more than ${bounded.maxImageBytes} bytes`);
      changes = read.changes;
      if (last.get(layer.digest)! > i) again.set(layer.digest, changes);
    } else if (last.get(layer.digest) === i) {
      again.delete(layer.digest);
    }
    for (const path of [...files.keys()]) {
      if (changes.removed.some((r) => under(path, r)) || changes.opaque.some((dir) => path !== dir && under(path, dir))) files.delete(path);
    }
    for (const [path, content] of changes.written) {
      if (content === null) files.delete(path);
      else files.set(path, content);
    }
    if (files.size > bounded.maxFiles) throw new InventoryError(`the image holds more than ${bounded.maxFiles} package databases and lockfiles`);
    if (heldBytes([files, ...[...again.values()].map((c) => c.written)]) > bounded.maxTotalBytes) {
      throw new InventoryError(`the image's package databases and lockfiles exceed ${bounded.maxTotalBytes} bytes`);
    }
  }
  return files;
}
