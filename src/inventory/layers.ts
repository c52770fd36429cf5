// Reads the few files an inventory needs out of an image's layers, streaming: each layer is
// decompressed and walked once (tar-stream), every other entry skipped unread, and only the wanted
// files are held, each bounded. Layers apply in order with the OCI image spec's whiteouts: a later
// layer's `.wh.<name>` removes `<name>` (and what lies below it) from the layers before it, and
// `.wh..wh..opq` empties its directory of them.
import { posix } from "node:path";
import { Transform, type Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { extract as tarExtract } from "tar-stream";
import { decompressed } from "./decompress.js";
import { InventoryError } from "./errors.js";

export interface LayerInput {
  /** For messages: `sha256:...`. */
  digest: string;
  /** The layer's bytes as stored (compressed or not). */
  open(): Readable;
}

export interface LayerLimits {
  /** Largest wanted file read, bytes. */
  maxFileBytes: number;
  /** Most bytes one layer may decompress to (bounds a compression bomb's work). */
  maxLayerBytes: number;
  /** Most wanted files held at once (lockfiles across a large tree). */
  maxFiles: number;
  /** Most bytes of wanted files held at once. */
  maxTotalBytes: number;
}

export const DEFAULT_LAYER_LIMITS: LayerLimits = {
  maxFileBytes: 64 * 1024 * 1024,
  maxLayerBytes: 64 * 1024 ** 3,
  maxFiles: 2000,
  maxTotalBytes: 256 * 1024 * 1024,
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
interface LayerChanges {
  removed: string[];
  opaque: string[];
  written: Map<string, Buffer | null>;
}

async function walkLayer(layer: LayerInput, limits: LayerLimits, signal?: AbortSignal): Promise<LayerChanges> {
  const changes: LayerChanges = { removed: [], opaque: [], written: new Map() };
  let held = 0;
  let source: Readable;
  try {
    source = layer.open();
  } catch (error) {
    throw new InventoryError(`layer ${layer.digest} cannot be read: ${(error as Error).message}`);
  }
  const { stream, compression } = await decompressed(source).catch((error: Error) => {
    throw new InventoryError(`layer ${layer.digest} cannot be read: ${error.message}`);
  });
  const extract = tarExtract();
  let total = 0;
  const counter = new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      total += chunk.length;
      if (total > limits.maxLayerBytes) callback(new InventoryError(`layer ${layer.digest} decompresses to more than ${limits.maxLayerBytes} bytes`));
      else if (signal?.aborted) callback(new InventoryError("the inventory was stopped"));
      else callback(null, chunk);
    },
  });
  // Errors of the source, the decompressor or the counter reach `extract`, and so the loop below.
  const feeding = pipeline(stream, counter, extract).catch(() => {});
  try {
    for await (const entry of extract) {
      const header = entry.header;
      const path = entryPath(header.name, layer.digest);
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
          throw new InventoryError(`layer ${layer.digest}: more than ${limits.maxFiles} package databases and lockfiles`);
        }
        const content = await readEntry(entry, limits.maxFileBytes, path, layer.digest);
        held += content.length;
        if (held > limits.maxTotalBytes) throw new InventoryError(`layer ${layer.digest}: package databases and lockfiles exceed ${limits.maxTotalBytes} bytes`);
        changes.written.set(path, content);
      } else {
        // A link or directory where a wanted file was: the file is gone from this layer on.
        changes.written.set(path, null);
        entry.resume();
      }
    }
  } catch (error) {
    stream.destroy();
    extract.destroy();
    await feeding;
    if (error instanceof InventoryError) throw error;
    throw new InventoryError(`layer ${layer.digest} is not a valid ${compression === "none" ? "tar" : `${compression}-compressed tar`}: ${(error as Error).message}`);
  }
  await feeding;
  return changes;
}

/**
 * The wanted files of the image the layers make, in order of the layers (lowest first): each
 * path with the content of the last layer that wrote it, unless a later layer removed it.
 * Throws InventoryError naming the layer that could not be read (not gzip/zstd/tar, truncated,
 * an absolute or `..` path, a limit passed).
 */
export async function readImageFiles(layers: LayerInput[], limits: Partial<LayerLimits> = {}, signal?: AbortSignal): Promise<Map<string, Buffer>> {
  const bounded = { ...DEFAULT_LAYER_LIMITS, ...limits };
  const files = new Map<string, Buffer>();
  for (const layer of layers) {
    const changes = await walkLayer(layer, bounded, signal);
    for (const path of [...files.keys()]) {
      if (changes.removed.some((r) => under(path, r)) || changes.opaque.some((dir) => path !== dir && under(path, dir))) files.delete(path);
    }
    for (const [path, content] of changes.written) {
      if (content === null) files.delete(path);
      else files.set(path, content);
    }
    if (files.size > bounded.maxFiles) throw new InventoryError(`the image holds more than ${bounded.maxFiles} package databases and lockfiles`);
    let total = 0;
    for (const content of files.values()) total += content.length;
    if (total > bounded.maxTotalBytes) throw new InventoryError(`the image's package databases and lockfiles exceed ${bounded.maxTotalBytes} bytes`);
  }
  return files;
}
