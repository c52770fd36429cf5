import { formatCounts, type ImportCounts } from "../store/batched-import.js";

/** A progress line redrawn in place, at most every 100 ms; only on a terminal. */
export function progressLine(stream: NodeJS.WriteStream, unit: string): { update(c: ImportCounts): void; clear(): void } {
  if (!stream.isTTY) return { update() {}, clear() {} };
  const started = Date.now();
  let drawn = 0;
  return {
    update(c) {
      const now = Date.now();
      if (now - drawn < 100) return;
      drawn = now;
      const rate = Math.round(c.read / Math.max((now - started) / 1000, 0.001));
      stream.write(`\r\x1b[K${formatCounts(c)} (${rate} ${unit}/s)`);
    },
    clear() {
      if (drawn > 0) stream.write("\r\x1b[K");
    },
  };
}

const MIB = 1024 * 1024;

/** How far a copy of blobs is (`registry import`). */
export interface CopyProgress {
  blobs: number;
  totalBlobs: number;
  bytes: number;
  totalBytes: number;
}

/** A copy of blobs as a line redrawn in place, at most every 100 ms; only on a terminal. */
export function byteProgressLine(stream: NodeJS.WriteStream): { update(p: CopyProgress): void; clear(): void } {
  if (!stream.isTTY) return { update() {}, clear() {} };
  const started = Date.now();
  let drawn = 0;
  return {
    update(p) {
      const now = Date.now();
      if (now - drawn < 100 && p.blobs < p.totalBlobs) return;
      drawn = now;
      const rate = p.bytes / MIB / Math.max((now - started) / 1000, 0.001);
      stream.write(`\r\x1b[Kblobs ${p.blobs}/${p.totalBlobs}, ${(p.bytes / MIB).toFixed(1)} of ${(p.totalBytes / MIB).toFixed(1)} MiB (${rate.toFixed(1)} MiB/s)`);
    },
    clear() {
      if (drawn > 0) stream.write("\r\x1b[K");
      drawn = 0;
    },
  };
}

/**
 * Runs an import for a command: refused entries go to stderr as `rejected <message>`, the summary
 * to stdout. Returns the exit status: 0, or 1 when `--strict` stopped at a refused entry.
 */
export async function runImportCommand(unit: string, run: (hooks: { onRejected: (e: Error) => void; onProgress: (c: Readonly<ImportCounts>) => void }) => Promise<ImportCounts>, isStrictStop: (e: unknown) => e is Error & { counts: ImportCounts }): Promise<number> {
  const progress = progressLine(process.stderr, unit);
  try {
    const counts = await run({
      onRejected: (error) => {
        progress.clear();
        process.stderr.write(`rejected ${error.message}\n`);
      },
      onProgress: (c) => progress.update(c),
    });
    progress.clear();
    process.stdout.write(`${formatCounts(counts)}\n`);
    return 0;
  } catch (error) {
    progress.clear();
    if (!isStrictStop(error)) throw error;
    process.stdout.write(`${formatCounts(error.counts)}\n`);
    process.stderr.write(`platform-api: --strict: stopped at a refused ${unit.replace(/s$/, "")}; the ${unit} of its batch were not written\n`);
    return 1;
  }
}
