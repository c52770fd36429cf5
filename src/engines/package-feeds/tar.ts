// Finding one file in a tar stream (POSIX ustar, with pax `path` and GNU long-name records), for the
// `PKG-INFO` of a Python sdist (`.tar.gz`). Reads sequentially and keeps only the wanted entry.

/** A tar stream that is not one, or is cut short. */
export class TarFormatError extends Error {
  override readonly name = "TarFormatError";
}

const BLOCK = 512;

/** Reads exact byte counts from a stream of chunks. */
class ByteReader {
  private pending: Buffer[] = [];
  private length = 0;
  private ended = false;

  constructor(private readonly chunks: AsyncIterator<Uint8Array> | Iterator<Uint8Array>) {}

  private async fill(n: number): Promise<void> {
    while (this.length < n && !this.ended) {
      const next = await this.chunks.next();
      if (next.done) this.ended = true;
      else {
        this.pending.push(Buffer.from(next.value.buffer, next.value.byteOffset, next.value.byteLength));
        this.length += next.value.byteLength;
      }
    }
  }

  /** Exactly `n` bytes; throws TarFormatError when the stream ends first. */
  async read(n: number): Promise<Buffer> {
    await this.fill(n);
    if (this.length < n) throw new TarFormatError("the archive ends inside an entry");
    const all = this.pending.length === 1 ? this.pending[0] : Buffer.concat(this.pending, this.length);
    const rest = all.subarray(n);
    this.pending = rest.length > 0 ? [rest] : [];
    this.length = rest.length;
    return all.subarray(0, n);
  }

  /** Discards `n` bytes; throws TarFormatError when the stream ends first. */
  async skip(n: number): Promise<void> {
    let left = n;
    while (left > 0) {
      if (this.length === 0) await this.fill(1);
      if (this.length === 0) throw new TarFormatError("the archive ends inside an entry");
      const head = this.pending[0];
      const take = Math.min(left, head.length);
      if (take === head.length) this.pending.shift();
      else this.pending[0] = head.subarray(take);
      this.length -= take;
      left -= take;
    }
  }
}

const text = (block: Buffer, start: number, end: number) => {
  const field = block.subarray(start, end);
  const nul = field.indexOf(0);
  return field.subarray(0, nul < 0 ? field.length : nul).toString("utf8");
};

function octal(block: Buffer, start: number, end: number): number {
  if (block[start] & 0x80) throw new TarFormatError("an entry larger than this reader takes (base-256 size)");
  const digits = text(block, start, end).trim();
  if (!/^[0-7]*$/.test(digits)) throw new TarFormatError("not a tar archive (a header field is not octal)");
  return digits === "" ? 0 : parseInt(digits, 8);
}

function checkHeader(block: Buffer): void {
  let sum = 0;
  for (let i = 0; i < BLOCK; i++) sum += i >= 148 && i < 156 ? 0x20 : block[i];
  if (octal(block, 148, 156) !== sum) throw new TarFormatError("not a tar archive (a header checksum does not match)");
}

/** The `path` record of a pax extended header, if it has one. */
function paxPath(data: Buffer): string | undefined {
  let path: string | undefined;
  let at = 0;
  while (at < data.length) {
    const space = data.indexOf(0x20, at);
    const length = space < 0 ? NaN : parseInt(data.subarray(at, space).toString("ascii"), 10);
    if (!Number.isSafeInteger(length) || length <= 0 || at + length > data.length) break;
    const record = data.subarray(space + 1, at + length - 1).toString("utf8");
    if (record.startsWith("path=")) path = record.slice(5);
    at += length;
  }
  return path;
}

/**
 * The data of the first regular file whose path (without a leading `./`) `wanted` accepts, or
 * undefined when the archive has none. Reading stops at that entry; at most `limit` bytes of it are
 * held (`{ tooLarge }` beyond), and at most `maxScan` bytes of the archive are read to find it.
 * @throws TarFormatError for a stream that is not a tar archive, ends early, or is longer than `maxScan`.
 */
export async function findTarEntry(
  chunks: AsyncIterable<Uint8Array> | Iterable<Uint8Array>,
  wanted: (path: string) => boolean,
  limits: { limit: number; maxScan: number },
): Promise<{ path: string; bytes: Buffer } | { path: string; tooLarge: true } | undefined> {
  const reader = new ByteReader(Symbol.asyncIterator in chunks ? chunks[Symbol.asyncIterator]() : chunks[Symbol.iterator]());
  let scanned = 0;
  let longName: string | undefined;
  for (;;) {
    const header = await reader.read(BLOCK).catch((error: unknown) => {
      if (scanned === 0) throw new TarFormatError("not a tar archive (empty)");
      throw error;
    });
    scanned += BLOCK;
    if (header.every((b) => b === 0)) return undefined;
    checkHeader(header);
    const size = octal(header, 124, 136);
    const padded = Math.ceil(size / BLOCK) * BLOCK;
    if (scanned + padded > limits.maxScan) throw new TarFormatError(`more than ${limits.maxScan} bytes before the entry was found`);
    const type = String.fromCharCode(header[156] || 0x30);
    const prefix = header.subarray(257, 262).toString("ascii") === "ustar" ? text(header, 345, 500) : "";
    const named = longName ?? (prefix ? `${prefix}/${text(header, 0, 100)}` : text(header, 0, 100));
    longName = undefined;
    if (type === "x" || type === "L") {
      if (size > 64 * 1024) throw new TarFormatError("an extended header larger than 64 KiB");
      const data = await reader.read(padded);
      longName = type === "L" ? text(data, 0, size) : paxPath(data.subarray(0, size));
    } else if ((type === "0" || type === "7") && wanted(named.replace(/^\.\//, ""))) {
      const path = named.replace(/^\.\//, "");
      if (size > limits.limit) return { path, tooLarge: true };
      return { path, bytes: Buffer.from((await reader.read(padded)).subarray(0, size)) };
    } else {
      await reader.skip(padded);
    }
    scanned += padded;
  }
}
