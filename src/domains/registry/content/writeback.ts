import { open, type FileHandle } from "node:fs/promises";

/** Bytes appended between two early flushes of an upload. */
export const WRITEBACK_BYTES = 8 * 1024 * 1024;

/**
 * Early flushes of files being written, so the flush that makes a blob durable before it is
 * acknowledged (`settle`, then the publisher's own fsync) finds little left to write: while an
 * upload's bytes arrive, every WRITEBACK_BYTES start a `fdatasync` of what was written so far
 * (one at a time), and when an append ends one more runs on while the client sends its next
 * request. Each runs on a read-only handle of its own (Linux flushes a file's pages through any of
 * its descriptors), closed when its flushes are done; a failed one is ignored: the publisher's
 * fsync, which does fail the commit, follows anyway.
 */
export function createWriteback() {
  /** The flushes still running, by file. */
  const running = new Map<string, Promise<void>>();

  return {
    /** Flushes of `path` while an append writes to it: `advance(bytes)` after each chunk is handed to the writer, `end(wrote)` after the last (or a failure). */
    during(path: string) {
      let handle: Promise<FileHandle | undefined> | undefined;
      let flushing: Promise<void> | undefined;
      let unflushed = 0;
      const datasync = async () => {
        handle ??= open(path, "r").catch(() => undefined);
        await (await handle)?.datasync().catch(() => {});
      };
      return {
        advance(bytes: number): void {
          unflushed += bytes;
          if (unflushed < WRITEBACK_BYTES || flushing !== undefined) return;
          unflushed = 0;
          const started: Promise<void> = datasync().finally(() => {
            if (flushing === started) flushing = undefined;
          });
          flushing = started;
        },
        end(wrote: boolean): void {
          const previous = running.get(path);
          const inFlight = flushing;
          const last = (async () => {
            await previous;
            await inFlight;
            if (wrote) await datasync();
            await (await handle)?.close().catch(() => {});
          })();
          running.set(path, last);
          void last.finally(() => {
            if (running.get(path) === last) running.delete(path);
          });
        },
      };
    },
    /** Waits for the flushes of `path` started before now. */
    async settle(path: string): Promise<void> {
      await running.get(path);
    },
  };
}
