// Reading one record's bytes with a hard bound: nothing beyond `limit + 1` bytes is ever held,
// whatever a file's size or a zip header claimed.

import { close, fstat, open, read } from "node:fs";
import { promisify } from "node:util";

const openFile = promisify(open);
const statFile = promisify(fstat);
const closeFile = promisify(close);
const readAt = (fd: number, buffer: Buffer, offset: number, position: number) =>
  new Promise<number>((resolve, reject) =>
    read(fd, buffer, offset, buffer.length - offset, position, (error, bytesRead) => (error ? reject(error) : resolve(bytesRead))),
  );

/** The result of a bounded read: the bytes, or the fact that there were more than the limit (and how many, when a size said so). */
export type BoundedBytes = { readonly bytes: Buffer } | { readonly tooLarge: true; readonly size?: number };

/**
 * Collects the chunks of a stream until it ends or more than `limit` bytes have arrived; in that
 * case it stops reading (leaving the loop destroys a Node stream) and returns `{ tooLarge: true }`.
 * Errors of the stream are thrown.
 */
export async function collectBounded(chunks: AsyncIterable<Uint8Array> | Iterable<Uint8Array>, limit: number): Promise<BoundedBytes> {
  const parts: Uint8Array[] = [];
  let total = 0;
  for await (const chunk of chunks) {
    total += chunk.length;
    if (total > limit) return { tooLarge: true };
    parts.push(chunk);
  }
  return { bytes: Buffer.concat(parts, total) };
}

/**
 * Reads a regular file whole if it has at most `limit` bytes. A file whose size is over the limit is
 * not read at all (`{ tooLarge, size }`); one that grows while it is read is stopped at `limit + 1`
 * bytes. Throws the I/O error of open or read, or an Error "not a regular file".
 */
export async function readFileBounded(path: string, limit: number): Promise<BoundedBytes> {
  // Callback-style fs with a descriptor: several times faster than FileHandle for many small files.
  const fd = await openFile(path, "r");
  try {
    const info = await statFile(fd);
    if (!info.isFile()) throw new Error("not a regular file");
    if (info.size > limit) return { tooLarge: true, size: info.size };
    let buffer = Buffer.allocUnsafe(info.size + 1);
    let length = 0;
    for (;;) {
      if (length === buffer.length) {
        if (length > limit) return { tooLarge: true };
        const larger = Buffer.allocUnsafe(Math.min(buffer.length * 2, limit + 1));
        buffer.copy(larger, 0, 0, length);
        buffer = larger;
      }
      const wanted = buffer.length - length;
      const bytesRead = await readAt(fd, buffer, length, length);
      length += bytesRead;
      // A regular file's read comes back short only at its end: no further read to see that (the
      // buffer has room for one byte more than the size, so a file that grew fills it and reads on).
      if (bytesRead < wanted) break;
    }
    return { bytes: buffer.subarray(0, length) };
  } finally {
    await closeFile(fd);
  }
}
