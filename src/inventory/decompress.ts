// A layer's bytes as a tar stream: gzip (Node's zlib), zstd (fzstd, pure JavaScript: Node 20's zlib
// has none) or plain tar, told apart by their magic numbers rather than by the media type (image
// tools label layers loosely).
import { Readable, Transform, type TransformCallback } from "node:stream";
import { createGunzip } from "node:zlib";
import { Decompress } from "fzstd";

const GZIP = [0x1f, 0x8b];
const ZSTD = [0x28, 0xb5, 0x2f, 0xfd];

const startsWith = (bytes: Buffer, magic: number[]) => magic.every((b, i) => bytes[i] === b);

/** A Transform inflating a zstd stream frame by frame; memory is fzstd's window, not the layer. */
export class ZstdDecompress extends Transform {
  private readonly decoder = new Decompress((chunk) => {
    this.push(Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength));
  });

  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    try {
      this.decoder.push(chunk);
      callback();
    } catch (error) {
      callback(error as Error);
    }
  }

  override _flush(callback: TransformCallback): void {
    try {
      this.decoder.push(new Uint8Array(0), true);
      callback();
    } catch (error) {
      callback(error as Error);
    }
  }
}

/** Which compression the first bytes announce. */
export function compressionOf(head: Buffer): "gzip" | "zstd" | "none" {
  if (startsWith(head, GZIP)) return "gzip";
  if (startsWith(head, ZSTD)) return "zstd";
  return "none";
}

/**
 * The decompressed bytes of `source`: peeks at its first chunk, then pipes it through the matching
 * decompressor. Errors of the source or the decompressor surface on the returned stream.
 */
export async function decompressed(source: Readable): Promise<{ stream: Readable; compression: "gzip" | "zstd" | "none" }> {
  const iterator = source[Symbol.asyncIterator]();
  let head = Buffer.alloc(0);
  let done = false;
  while (head.length < 4 && !done) {
    const next = await iterator.next();
    if (next.done) done = true;
    else head = Buffer.concat([head, next.value as Buffer]);
  }
  const rest = Readable.from(
    (async function* () {
      if (head.length > 0) yield head;
      if (done) return;
      for (;;) {
        const next = await iterator.next();
        if (next.done) return;
        yield next.value as Buffer;
      }
    })(),
    { objectMode: false },
  );
  const compression = compressionOf(head);
  if (compression === "none") return { stream: rest, compression };
  const inflate = compression === "gzip" ? createGunzip() : new ZstdDecompress();
  rest.on("error", (error) => inflate.destroy(error));
  return { stream: rest.pipe(inflate), compression };
}
