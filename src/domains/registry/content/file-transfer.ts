import { open } from "node:fs/promises";
import type { Writable } from "node:stream";

/**
 * Writes bytes [start, end] (inclusive) of the file at `path` to `out`, through two buffers of
 * `chunkBytes` used in turn: a buffer is read into again only once its previous write reached the
 * socket (the write's callback), so at most two chunks are in flight and nothing is allocated per
 * chunk. (A read stream allocates a buffer per chunk: at a registry's rates that is gigabytes a
 * second of external memory, whose collections cost a large process more than the copy itself.)
 * Rejects when the file ends early or a write fails (the client went away); leaves `out` open.
 */
export async function writeFileRange(path: string, start: number, end: number, out: Writable, chunkBytes: number): Promise<void> {
  const handle = await open(path, "r");
  const inFlight: Array<Promise<void> | undefined> = [undefined, undefined];
  try {
    const buffers = [Buffer.allocUnsafeSlow(Math.min(chunkBytes, end - start + 1)), Buffer.allocUnsafeSlow(Math.min(chunkBytes, end - start + 1))];
    let position = start;
    for (let turn = 0; position <= end; turn ^= 1) {
      await inFlight[turn];
      const buffer = buffers[turn];
      const { bytesRead } = await handle.read(buffer, 0, Math.min(buffer.length, end - position + 1), position);
      if (bytesRead === 0) throw new Error(`${path} ended at byte ${position}, before byte ${end}`);
      position += bytesRead;
      const written = new Promise<void>((resolve, reject) => out.write(buffer.subarray(0, bytesRead), (error) => (error ? reject(error) : resolve())));
      written.catch(() => {}); // awaited in its turn (or below); a failure meanwhile is not unhandled
      inFlight[turn] = written;
    }
    await Promise.all(inFlight);
  } finally {
    // A buffer may be reused only once its write is done, even when this ends early.
    await Promise.allSettled(inFlight);
    await handle.close();
  }
}
