// Inventories off the event loop: the CPU-heavy steps (decompressing and walking a layer, parsing
// package databases, lockfiles and SBOMs, removing repeats) run on a pool of worker threads, and
// the caller's thread only moves bytes: a layer's stored bytes to a thread a slice at a time, as
// the thread asks for them, and the packages back in batches.
import { extname } from "node:path";
import type { Readable } from "node:stream";
import { fileURLToPath } from "node:url";
import { InventoryError, stopReason } from "./errors.js";
import { appendAll, type AttachedSbom, type FileInventory } from "./image.js";
import type { LayerChanges, LayerReader } from "./layers.js";
import type { InventoryPackage } from "./package.js";
import { bufferOf, handedOver, LAYER_SLICE_BYTES, ownCopy, type LayerInput, type LayerTask, type LayerTaskResult, type PackagesInput, type PackagesTask, type PackagesTaskResult, type TaskOutput } from "./scan-tasks.js";
import { createThreadPool } from "./thread-pool.js";

export interface ScanThreadsOptions {
  /** Threads at most. */
  size: number;
  /** Each thread's JS heap, MiB: a task that needs more fails, and its thread is replaced. */
  heapMb: number;
  /** CPU time one task (one layer's read, or one image's packages) may use, ms: then it fails, and its thread is replaced. */
  cpuBudgetMs: number;
}

export const SCAN_THREADS_DEFAULTS: ScanThreadsOptions = { size: 2, heapMb: 512, cpuBudgetMs: 120_000 };

export interface ScanThreads {
  /**
   * Reads a layer on a thread (a LayerReader for `readImageFiles`). A layer past the CPU budget or
   * the heap, or stopped by `signal`, has an InventoryError as outcome, not lasting. Rejects when a
   * thread crashes or cannot start, or the threads are closed.
   */
  readLayer: LayerReader;
  /**
   * `packagesOfImage` on a thread; rejects as it does, and as `readLayer` does for the thread's own
   * failures. The files are shared with the thread (those `readLayer` read) or copied; the bytes of
   * each SBOM are moved to it when they fill their ArrayBuffer whole: the caller gives them up.
   */
  packagesOfImage(files: ReadonlyMap<string, Buffer>, sboms: AsyncIterable<AttachedSbom>, signal?: AbortSignal): Promise<FileInventory>;
  /** Fails the tasks queued and running, and ends the threads. */
  close(): Promise<void>;
}

/** Scan threads' priority (`os.constants.priority.PRIORITY_BELOW_NORMAL`): when cores are short, the event loop's thread runs first. */
const SCAN_PRIORITY = 10;

/** The thread's module beside this one, in the form this one runs as: compiled (`.js`, dist/), or TypeScript under a loader that the threads inherit. */
const SCRIPT = new URL(`./scan-thread${extname(fileURLToPath(import.meta.url))}`, import.meta.url);

/** `source` in slices of at most LAYER_SLICE_BYTES: a message a thread takes, and the caller's loop copies, in well under a millisecond. */
async function* slices(source: Readable): AsyncGenerator<Uint8Array> {
  for await (const chunk of source) {
    const bytes = chunk as Buffer;
    for (let at = 0; at < bytes.length; at += LAYER_SLICE_BYTES) yield bytes.subarray(at, at + LAYER_SLICE_BYTES);
  }
}

function changesOf(result: Extract<LayerTaskResult, { changes: unknown }>): LayerChanges {
  return {
    removed: result.changes.removed,
    opaque: result.changes.opaque,
    written: new Map(result.changes.written.map(([path, content]) => [path, content === null ? null : bufferOf(content)])),
  };
}

export function createScanThreads(options: Partial<ScanThreadsOptions> = {}): ScanThreads {
  const settings = { ...SCAN_THREADS_DEFAULTS, ...options };
  const pool = createThreadPool({ script: SCRIPT, size: settings.size, heapMb: settings.heapMb, cpuBudgetMs: settings.cpuBudgetMs, priority: SCAN_PRIORITY });

  const readLayer: LayerReader = async (layer, limits, budget, signal) => {
    if (signal?.aborted) return { outcome: { error: stopReason(signal) }, lasting: false };
    let source: Readable;
    try {
      source = layer.open();
    } catch (error) {
      return { outcome: { error: new InventoryError(`layer ${layer.digest} cannot be read: ${(error as Error).message}`) }, lasting: false };
    }
    let sourceFailed = false;
    source.once("error", () => (sourceFailed = true));
    const bytes = slices(source);
    const start: LayerTask = { kind: "layer", digest: layer.digest, limits, limit: Math.min(limits.maxLayerBytes, budget) };
    const task = pool.run<LayerTaskResult>(start, {
      what: `layer ${layer.digest}`,
      signal,
      onMessage: () =>
        void bytes.next().then(
          (next) => {
            if (next.done) return task.send({ end: true } satisfies LayerInput);
            const chunk = ownCopy(next.value);
            task.send({ chunk } satisfies LayerInput, [chunk.buffer]);
          },
          (error: Error) => {
            sourceFailed = true;
            task.send({ error: error.message } satisfies LayerInput);
          },
        ),
    });
    try {
      const result = await task.result;
      if (signal?.aborted) return { outcome: { error: stopReason(signal) }, lasting: false };
      if ("error" in result) return { outcome: { error: new InventoryError(result.error) }, lasting: !sourceFailed && !result.overBudget };
      return { outcome: { changes: changesOf(result), bytes: result.bytes }, lasting: !sourceFailed };
    } catch (error) {
      if (error instanceof InventoryError) return { outcome: { error }, lasting: false };
      throw error;
    } finally {
      source.destroy();
    }
  };

  async function packagesOfImage(files: ReadonlyMap<string, Buffer>, sboms: AsyncIterable<AttachedSbom>, signal?: AbortSignal): Promise<FileInventory> {
    const next = sboms[Symbol.asyncIterator]();
    const packages: InventoryPackage[] = [];
    let readFailure: unknown;
    const handed = [...files].map(([path, content]) => ({ path, ...handedOver(content, false) }));
    const task = pool.run<PackagesTaskResult>(
      { kind: "packages", files: handed.map(({ path, bytes }): [string, Uint8Array] => [path, bytes]) } satisfies PackagesTask,
      {
        what: "reading the image's package databases, lockfiles and SBOMs",
        signal,
        onMessage: (body) => {
          const output = body as TaskOutput;
          if ("packages" in output) {
            appendAll(packages, output.packages);
            // Asked for at the check phase: the loop serves the I/O waiting before the next batch comes.
            return void setImmediate(() => task.send({ taken: true } satisfies PackagesInput));
          }
          void next.next().then(
            (sbom) => {
              if (sbom.done) return task.send({ end: true } satisfies PackagesInput);
              const { bytes, transfer } = handedOver(sbom.value.bytes, true);
              task.send({ sbom: { bytes, what: sbom.value.what } } satisfies PackagesInput, transfer && [transfer]);
            },
            (error: Error) => {
              readFailure = error;
              task.send({ error: error.message } satisfies PackagesInput);
            },
          );
        },
      },
      handed.flatMap(({ transfer }) => (transfer ? [transfer] : [])),
    );
    try {
      const { distro } = await task.result;
      return distro === undefined ? { packages } : { distro, packages };
    } catch (error) {
      throw readFailure ?? error;
    } finally {
      void next.return?.().catch(() => {});
    }
  }

  return { readLayer, packagesOfImage, close: () => pool.close() };
}
