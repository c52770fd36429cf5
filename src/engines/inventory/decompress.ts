// A layer's bytes as a tar stream: gzip (Node's zlib), zstd (fzstd, pure JavaScript: Node 20's zlib
// has none) or plain tar, told apart by their magic numbers rather than by the media type (image
// tools label layers loosely).
import { Duplex, Readable } from "node:stream";
import { createGunzip } from "node:zlib";
import { Decompress } from "fzstd";
import { DEFAULT_MAX_ZSTD_WINDOW_BYTES, zstdFrameChecker } from "./zstd-frames.js";

const GZIP = [0x1f, 0x8b];
const ZSTD = [0x28, 0xb5, 0x2f, 0xfd];

const startsWith = (bytes: Buffer, magic: number[]) => magic.every((b, i) => bytes[i] === b);

/**
 * Compressed bytes handed to the zstd decoder at a time. fzstd decodes every complete block of
 * what it is given at once, and a 4-byte RLE block stands for 128 KiB: one slice decodes to at most
 * (SLICE / 4) * 128 KiB (16 MiB), whatever the input's ratio. fzstd keeps an incomplete block and
 * joins it once it is whole, so small slices cost no extra copying.
 */
const ZSTD_SLICE = 512;

export interface DecompressOptions {
  /** Largest window a zstd frame may declare (DEFAULT_MAX_ZSTD_WINDOW_BYTES). */
  maxZstdWindowBytes?: number;
  /** Names the input in errors: `layer sha256:...`. */
  name?: string;
}

/**
 * A zstd stream inflated with backpressure: each slice's output is yielded, and the next slice is
 * decoded only when the reader asks for more, so memory is fzstd's window plus one slice's output,
 * never the layer's (a bomb of 8 GiB of zeros in 269 KB is read as slowly as its reader reads).
 * Each slice's frames are checked before fzstd sees it (`zstdFrameChecker`): a frame declaring a
 * window over `maxZstdWindowBytes` fails the stream with an InventoryError before its window is
 * allocated, and blocks over their frame's block maximum fail it too.
 */
export function zstdDecompress(options: DecompressOptions = {}): Duplex {
  const check = zstdFrameChecker(options.maxZstdWindowBytes ?? DEFAULT_MAX_ZSTD_WINDOW_BYTES, options.name ?? "the input");
  return Duplex.from(async function* (source: AsyncIterable<Buffer>) {
    let decoded: Uint8Array[] = [];
    const decoder = new Decompress((chunk) => {
      if (chunk.length > 0) decoded.push(chunk);
    });
    const ready = function* () {
      const pieces = decoded;
      decoded = [];
      for (const piece of pieces) yield Buffer.from(piece.buffer, piece.byteOffset, piece.byteLength);
    };
    for await (const chunk of source) {
      for (let at = 0; at < chunk.length; at += ZSTD_SLICE) {
        const slice = chunk.subarray(at, at + ZSTD_SLICE);
        check(slice);
        decoder.push(slice);
        yield* ready();
      }
    }
    decoder.push(new Uint8Array(0), true);
    yield* ready();
  });
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
export async function decompressed(source: Readable, options: DecompressOptions = {}): Promise<{ stream: Readable; compression: "gzip" | "zstd" | "none" }> {
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
  const inflate = compression === "gzip" ? createGunzip() : zstdDecompress(options);
  rest.on("error", (error) => inflate.destroy(error));
  return { stream: rest.pipe(inflate), compression };
}
