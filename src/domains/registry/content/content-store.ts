import { createHash, randomUUID, type Hash } from "node:crypto";
import { createReadStream, createWriteStream } from "node:fs";
import { mkdir, open, readdir, rename, rm, stat, truncate } from "node:fs/promises";
import { join } from "node:path";
import type { Readable, Writable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { DIGEST, DIGEST_RULE, digestAlgorithm, digestHex, digestOf, hashOf } from "../digests.js";
import { writeFileRange } from "./file-transfer.js";
import { createWriteback } from "./writeback.js";

/**
 * Where blob bytes live, named by digest. An upload is written aside and becomes a
 * blob only by `commit`, which checks its digest first, so a blob is visible whole or
 * not at all. The filesystem implementation is the default; `s3-content-store.ts`
 * implements the same interface on an S3-compatible bucket.
 */
export interface ContentStore {
  /** The size of blob `digest`, or undefined when it is not stored. */
  size(digest: string): Promise<number | undefined>;
  /** Reads blob `digest`, or its byte range [start, end] (inclusive); for a missing blob the stream fails with an error whose code is ENOENT. */
  read(digest: string, range?: { start: number; end: number }): Readable;
  /**
   * Writes bytes [start, end] (inclusive) of blob `digest` to `out` and ends it: the registry host's
   * blob answer. Rejects when the blob is missing or shorter, or a write fails; `out` is then left
   * to the caller.
   */
  writeTo(digest: string, range: { start: number; end: number }, out: Writable): Promise<void>;
  /**
   * A URL at which anyone holding it may GET blob `digest` itself, without the registry host's
   * credentials, for `expiresInSeconds` (1 to 604800); undefined when this store cannot give
   * one at the moment. Only a store whose bytes a client can fetch directly (S3) has this; it
   * does not check that the blob exists, so callers check first.
   */
  redirectUrl?(digest: string, expiresInSeconds: number): Promise<string | undefined>;

  /** Starts an empty upload; returns its id. */
  createUpload(): Promise<string>;
  /** Bytes received so far, or undefined for an unknown upload. */
  uploadSize(id: string): Promise<number | undefined>;
  /**
   * Appends `source` to upload `id`; returns the new size. Throws UploadTooLarge when the
   * upload would exceed `maxTotal` bytes, and, when `length` is given, ChunkLengthMismatch
   * when the chunk is not exactly `length` bytes; a chunk that fails (those, or its source
   * failing) is cut off again, leaving the upload as it was.
   */
  append(id: string, source: Readable, maxTotal: number, length?: number): Promise<number>;
  /**
   * Turns upload `id` into blob `digest` when its bytes hash to it; throws DigestMismatch
   * otherwise (the upload is kept, so the client may still correct it). Returns the size.
   */
  commit(id: string, digest: string): Promise<number>;
  /** Forgets upload `id`; no-op when unknown. */
  removeUpload(id: string): Promise<void>;
  /** Removes blob `digest` (garbage collection); no-op when it is not stored. */
  remove(digest: string): Promise<void>;
  /** Stores `bytes` as a blob (for imports); returns its digest. */
  put(bytes: Buffer): Promise<string>;
  /**
   * Stores the bytes of `source` as blob `digest`, hashing them as they are written (for
   * imports: memory stays flat whatever the size). Throws DigestMismatch when they hash to
   * another digest, storing nothing. Returns the size.
   */
  putStream(source: Readable, digest: string): Promise<number>;
  /** Removes uploads last written before `before` (epoch ms); returns how many. */
  removeStaleUploads(before: number): Promise<number>;
}

export class DigestMismatch extends Error {
  constructor(readonly expected: string, readonly actual: string) {
    super(`the content hashes to ${actual}, not ${expected}`);
  }
}

export class UploadTooLarge extends Error {
  constructor(readonly limit: number) {
    super(`a blob is at most ${limit} bytes`);
  }
}

export class ChunkLengthMismatch extends Error {
  constructor(readonly expected: number, readonly received: number) {
    super(`the chunk is ${received > expected ? "longer than" : `${received} bytes, not`} the ${expected} bytes its Content-Range names`);
  }
}

const UPLOAD_ID = /^[0-9a-f-]{36}$/;

/** The SHA-256 of an upload so far, as its appends computed it, and the bytes it covers. */
interface UploadHash {
  hash: Hash;
  size: number;
}

/**
 * The running hashes of the uploads this process appends to, so that finishing one need not read
 * it again. A hash is kept only while its appends came one after another from this process: one
 * that starts while another append to the same upload runs spoils both (the bytes' order on disk
 * is then not the order they were hashed in), one that fails drops it, and one that starts where
 * the hash does not end (an append by another replica, or before a restart) has none; `commit`
 * then reads the upload. At most `MAX_UPLOAD_HASHES` are kept (the oldest go first).
 */
function uploadHashes() {
  const kept = new Map<string, UploadHash>();
  /** The appends running now, by upload: how many, and whether they overlapped. */
  const appending = new Map<string, { count: number; spoiled: boolean }>();
  return {
    /** Starts an append at `start`: the hash to update, or undefined to update none. Call `end` after, always. */
    resume(id: string, start: number): Hash | undefined {
      const running = appending.get(id);
      const previous = kept.get(id);
      kept.delete(id);
      if (running) {
        running.count++;
        running.spoiled = true;
        return undefined;
      }
      appending.set(id, { count: 1, spoiled: false });
      if (start === 0) return createHash("sha256");
      return previous?.size === start ? previous.hash : undefined;
    },
    /** Ends an append: keeps `result` (the hash and the upload's size after it) unless the append failed or overlapped another. */
    end(id: string, result: UploadHash | undefined): void {
      const running = appending.get(id);
      if (running === undefined) return;
      if (--running.count === 0) appending.delete(id);
      if (result === undefined || running.spoiled) return;
      kept.set(id, result);
      if (kept.size > MAX_UPLOAD_HASHES) kept.delete(kept.keys().next().value!);
    },
    /** The hash kept for the upload (forgotten here), unless an append to it runs. */
    take(id: string): UploadHash | undefined {
      const hash = kept.get(id);
      kept.delete(id);
      return appending.has(id) ? undefined : hash;
    },
  };
}

/** Uploads whose running hash is kept at most (each a few hundred bytes). */
const MAX_UPLOAD_HASHES = 10_000;

/**
 * A blob is read in chunks this large: each chunk is one read and one socket write, so 1 MiB
 * costs a sixteenth of the system calls and stream steps of Node's default 64 KiB (a 20 MB layer
 * pull measured 9 ms of CPU instead of 21 ms in a bare `node:http` server).
 */
const READ_CHUNK_BYTES = 1024 * 1024;

/**
 * An upload's bytes are buffered up to this much while the file write in flight finishes, then
 * written with one `writev`: a socket delivers 64 KiB chunks, and one write per chunk (a trip
 * through libuv's thread pool each) made receiving an 8 MB layer cost several times its hashing.
 */
const WRITE_BUFFER_BYTES = 1024 * 1024;

/**
 * A content store under `root`: `blobs/<algorithm>/<2 hex>/<hex>` (sha256 or sha512) and
 * `uploads/<id>`. An upload's running hash is sha256 (the digest nearly every client names); one
 * committed under a sha512 digest is read again and hashed by sha512.
 */
export function createFileContentStore(root: string): ContentStore {
  const hashes = uploadHashes();
  const writeback = createWriteback();
  const blobPath = (digest: string) => {
    if (!DIGEST.test(digest)) throw new Error(`not a supported digest (${DIGEST_RULE}): ${digest}`);
    const hex = digestHex(digest);
    return join(root, "blobs", digestAlgorithm(digest), hex.slice(0, 2), hex);
  };
  const uploadPath = (id: string) => {
    if (!UPLOAD_ID.test(id)) throw new Error(`not an upload id: ${id}`);
    return join(root, "uploads", id);
  };
  const sizeOf = async (path: string) => {
    try {
      return (await stat(path)).size;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
      throw error;
    }
  };

  /** Moves a complete, synced file into place as blob `digest` (rename is atomic on one filesystem). */
  async function publish(file: string, digest: string): Promise<void> {
    const target = blobPath(digest);
    await mkdir(join(target, ".."), { recursive: true });
    await writeback.settle(file);
    const handle = await open(file, "r");
    try {
      await handle.sync();
    } finally {
      await handle.close();
    }
    await rename(file, target);
  }

  return {
    size: (digest) => sizeOf(blobPath(digest)),

    read(digest, range) {
      return createReadStream(blobPath(digest), { highWaterMark: READ_CHUNK_BYTES, ...(range && { start: range.start, end: range.end }) });
    },

    async writeTo(digest, range, out) {
      if (range.end >= range.start) await writeFileRange(blobPath(digest), range.start, range.end, out, READ_CHUNK_BYTES);
      out.end();
    },

    async createUpload() {
      const id = randomUUID();
      await mkdir(join(root, "uploads"), { recursive: true });
      const handle = await open(uploadPath(id), "wx");
      await handle.close();
      return id;
    },

    uploadSize: (id) => (UPLOAD_ID.test(id) ? sizeOf(uploadPath(id)) : Promise.resolve(undefined)),

    async append(id, source, maxTotal, length) {
      const path = uploadPath(id);
      const start = await sizeOf(path);
      if (start === undefined) throw new Error(`no upload ${id}`);
      const hash = hashes.resume(id, start);
      const flushes = writeback.during(path);
      let total = start;
      try {
        await pipeline(
          source,
          async function* (chunks: AsyncIterable<Buffer>) {
            for await (const chunk of chunks) {
              total += chunk.length;
              if (length !== undefined && total - start > length) throw new ChunkLengthMismatch(length, total - start);
              if (total > maxTotal) throw new UploadTooLarge(maxTotal);
              hash?.update(chunk);
              yield chunk;
              flushes.advance(chunk.length);
            }
          },
          createWriteStream(path, { flags: "r+", start, highWaterMark: WRITE_BUFFER_BYTES }),
        );
        if (length !== undefined && total - start !== length) throw new ChunkLengthMismatch(length, total - start);
      } catch (error) {
        flushes.end(false);
        hashes.end(id, undefined);
        await truncate(path, start); // a failed chunk leaves the upload as it was
        throw error;
      }
      flushes.end(total > start);
      hashes.end(id, hash && { hash, size: total });
      return total;
    },

    async commit(id, digest) {
      const path = uploadPath(id);
      const kept = hashes.take(id);
      const algorithm = DIGEST.test(digest) ? digestAlgorithm(digest) : "sha256";
      let actual: string;
      let size: number;
      if (algorithm === "sha256" && kept !== undefined && kept.size === (await sizeOf(path))) {
        [actual, size] = [`sha256:${kept.hash.digest("hex")}`, kept.size];
      } else {
        // Appended by another process, before a restart, or named by another algorithm: read it again.
        const hash = hashOf(algorithm);
        size = 0;
        for await (const chunk of createReadStream(path, { highWaterMark: READ_CHUNK_BYTES })) {
          hash.update(chunk as Buffer);
          size += (chunk as Buffer).length;
        }
        actual = `${algorithm}:${hash.digest("hex")}`;
      }
      if (actual !== digest) throw new DigestMismatch(digest, actual);
      await publish(path, digest);
      return size;
    },

    async remove(digest) {
      await rm(blobPath(digest), { force: true });
    },

    async removeUpload(id) {
      hashes.take(id);
      if (UPLOAD_ID.test(id)) await rm(uploadPath(id), { force: true });
    },

    async put(bytes) {
      const digest = digestOf(bytes);
      if ((await sizeOf(blobPath(digest))) === bytes.length) return digest;
      await mkdir(join(root, "uploads"), { recursive: true });
      const temp = join(root, "uploads", randomUUID());
      const handle = await open(temp, "wx");
      try {
        await handle.writeFile(bytes);
      } finally {
        await handle.close();
      }
      await publish(temp, digest);
      return digest;
    },

    async putStream(source, digest) {
      blobPath(digest); // refuses a malformed digest before anything is written
      await mkdir(join(root, "uploads"), { recursive: true });
      const temp = join(root, "uploads", randomUUID());
      const algorithm = digestAlgorithm(digest);
      const hash = hashOf(algorithm);
      let size = 0;
      try {
        await pipeline(
          source,
          async function* (chunks: AsyncIterable<Buffer>) {
            for await (const chunk of chunks) {
              hash.update(chunk);
              size += chunk.length;
              yield chunk;
            }
          },
          createWriteStream(temp, { flags: "wx", highWaterMark: WRITE_BUFFER_BYTES }),
        );
        const actual = `${algorithm}:${hash.digest("hex")}`;
        if (actual !== digest) throw new DigestMismatch(digest, actual);
        await publish(temp, digest);
        return size;
      } catch (error) {
        await rm(temp, { force: true });
        throw error;
      }
    },

    async removeStaleUploads(before) {
      const dir = join(root, "uploads");
      const names = await readdir(dir).catch(() => [] as string[]);
      let removed = 0;
      for (const name of names) {
        const info = await stat(join(dir, name)).catch(() => undefined);
        if (info && info.mtimeMs < before) {
          await rm(join(dir, name), { force: true });
          removed++;
        }
      }
      return removed;
    },
  };
}
