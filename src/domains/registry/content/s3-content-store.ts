import { randomUUID } from "node:crypto";
import { PassThrough, Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import {
  CopyObjectCommand,
  DeleteObjectCommand,
  DeleteObjectsCommand,
  GetObjectCommand,
  HeadBucketCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  S3Client,
} from "@aws-sdk/client-s3";
import { Upload } from "@aws-sdk/lib-storage";
import { getSignedUrl } from "@aws-sdk/s3-request-presigner";
import { DIGEST, DIGEST_RULE, digestAlgorithm, digestHex, digestOf, hashOf } from "../digests.js";
import { ChunkLengthMismatch, DigestMismatch, UploadTooLarge, type ContentStore } from "./content-store.js";
import { StorageUnavailable, type S3Location } from "./s3-location.js";

/**
 * The content store on an S3-compatible object store, for replicas that share blobs. Keys under
 * the location's prefix:
 * - `blobs/<algorithm>/<2 hex>/<hex>` (sha256 or sha512): a blob, written only whole (a single PUT, a completed
 *   multipart upload or a server-side copy) and only after its bytes were hashed to its digest;
 * - `uploads/<id>/start`: an upload exists (empty marker);
 * - `uploads/<id>/<offset, 16 digits>`: a chunk of it, one object per PATCH, starting at that byte.
 * An upload's state is only these objects, so any replica continues an upload another one
 * started. A chunk is written as one object, complete or not at all, so a failed chunk leaves
 * the upload as it was. Bytes stream through: at most a multipart part (5 MiB or more) per chunk
 * is held in memory.
 */

const UPLOAD_ID = /^[0-9a-f-]{36}$/;
const CHUNK = /\/(\d{16})$/;
/** S3's smallest multipart part, and the most parts an upload may have. */
const MIN_PART_BYTES = 5 * 1024 * 1024;
const MAX_PARTS = 10_000;
/** CopyObject copies at most 5 GiB; a larger single chunk is copied by streaming it. */
const MAX_COPY_BYTES = 5 * 1024 ** 3;

/**
 * An S3 client configured the AWS SDK's standard way: credentials from `AWS_ACCESS_KEY_ID` /
 * `AWS_SECRET_ACCESS_KEY` / `AWS_SESSION_TOKEN`, a profile, web identity or instance metadata;
 * `AWS_REGION` (else `AWS_DEFAULT_REGION`, else us-east-1); `AWS_ENDPOINT_URL_S3` or
 * `AWS_ENDPOINT_URL` for another S3-compatible service, which is then addressed path-style
 * (`<endpoint>/<bucket>/<key>`, what MinIO, Ceph and most self-hosted stores expect). Checksums
 * are sent only where S3 requires them (not every S3-compatible server accepts the newer ones).
 */
export function s3ClientFromEnvironment(env: NodeJS.ProcessEnv = process.env): S3Client {
  const endpoint = env.AWS_ENDPOINT_URL_S3 || env.AWS_ENDPOINT_URL;
  return new S3Client({
    region: env.AWS_REGION || env.AWS_DEFAULT_REGION || "us-east-1",
    forcePathStyle: endpoint !== undefined && endpoint !== "",
    requestChecksumCalculation: "WHEN_REQUIRED",
    responseChecksumValidation: "WHEN_REQUIRED",
  });
}

function isNotFound(error: unknown): boolean {
  const e = error as { name?: string; $metadata?: { httpStatusCode?: number } };
  return e?.name === "NotFound" || e?.name === "NoSuchKey" || e?.$metadata?.httpStatusCode === 404;
}

interface Chunk {
  key: string;
  offset: number;
  size: number;
}

export function createS3ContentStore(location: S3Location, client: S3Client = s3ClientFromEnvironment()): ContentStore & { checkReachable(): Promise<void> } {
  const { bucket, prefix } = location;
  const blobKey = (digest: string) => {
    if (!DIGEST.test(digest)) throw new Error(`not a supported digest (${DIGEST_RULE}): ${digest}`);
    const hex = digestHex(digest);
    return `${prefix}blobs/${digestAlgorithm(digest)}/${hex.slice(0, 2)}/${hex}`;
  };
  const uploadPrefix = (id: string) => {
    if (!UPLOAD_ID.test(id)) throw new Error(`not an upload id: ${id}`);
    return `${prefix}uploads/${id}/`;
  };

  async function* listed(keyPrefix: string) {
    let token: string | undefined;
    do {
      const page = await client.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: keyPrefix, ContinuationToken: token }));
      for (const item of page.Contents ?? []) if (item.Key !== undefined) yield { key: item.Key, size: Number(item.Size ?? 0), modified: item.LastModified?.getTime() ?? 0 };
      token = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (token !== undefined);
  }

  /** Upload `id`'s chunks that follow one another from byte 0, in order; undefined when it does not exist. */
  async function chunksOf(id: string): Promise<Chunk[] | undefined> {
    let exists = false;
    const all: Chunk[] = [];
    for await (const item of listed(uploadPrefix(id))) {
      if (item.key.endsWith("/start")) exists = true;
      const match = CHUNK.exec(item.key);
      if (match) all.push({ key: item.key, offset: Number(match[1]), size: item.size });
    }
    if (!exists) return undefined;
    all.sort((a, b) => a.offset - b.offset);
    const chunks: Chunk[] = [];
    let end = 0;
    for (const chunk of all) {
      if (chunk.offset !== end) continue;
      chunks.push(chunk);
      end += chunk.size;
    }
    return chunks;
  }
  const endOf = (chunks: Chunk[]) => chunks.reduce((sum, c) => sum + c.size, 0);

  async function objectStream(key: string, range?: { start: number; end: number }): Promise<Readable> {
    const answer = await client.send(new GetObjectCommand({ Bucket: bucket, Key: key, Range: range && `bytes=${range.start}-${range.end}` }));
    return answer.Body as Readable;
  }

  /** Writes `body` as object `key`, whole or not at all (a PUT, or a multipart upload for more than one part). */
  async function writeObject(key: string, body: Readable, expectedBytes: number): Promise<void> {
    const partSize = Math.max(MIN_PART_BYTES, Math.ceil(expectedBytes / MAX_PARTS));
    await new Upload({ client, params: { Bucket: bucket, Key: key, Body: body }, partSize, queueSize: 1 }).done();
  }

  async function deleteKeys(keys: string[]): Promise<void> {
    for (let i = 0; i < keys.length; i += 1000) {
      const batch = keys.slice(i, i + 1000);
      await client.send(new DeleteObjectsCommand({ Bucket: bucket, Delete: { Objects: batch.map((Key) => ({ Key })), Quiet: true } }));
    }
  }

  async function size(digest: string): Promise<number | undefined> {
    try {
      const head = await client.send(new HeadObjectCommand({ Bucket: bucket, Key: blobKey(digest) }));
      return Number(head.ContentLength ?? 0);
    } catch (error) {
      if (isNotFound(error)) return undefined;
      throw error;
    }
  }

  async function removeUpload(id: string): Promise<void> {
    if (!UPLOAD_ID.test(id)) return;
    const keys: string[] = [];
    for await (const item of listed(uploadPrefix(id))) keys.push(item.key);
    await deleteKeys(keys);
  }

  /** Blob `digest` (or a range of it) streamed from its object; a missing one fails with ENOENT, as the file store's. */
  function read(digest: string, range?: { start: number; end: number }): Readable {
    const key = blobKey(digest);
    const out = new PassThrough();
    objectStream(key, range)
      .then((body) => pipeline(body, out))
      .catch((error: unknown) => {
        // The filesystem store's error for a missing blob, which callers test for.
        const failure = isNotFound(error) ? Object.assign(new Error(`no blob ${digest}`), { code: "ENOENT" }) : (error as Error);
        out.destroy(failure);
      });
    return out;
  }

  return {
    size,

    read,

    async writeTo(digest, range, out) {
      // An empty range (a zero-byte blob: end before start) is no object read: S3 refuses `bytes=0--1`.
      if (range.end < range.start) return void out.end();
      await pipeline(read(digest, range), out);
    },

    /** A SigV4 presigned GetObject URL on the client's endpoint (AWS_ENDPOINT_URL_S3 or AWS's), signed locally without a request to the bucket; it lives at most as long as the credentials that signed it. */
    redirectUrl(digest, expiresInSeconds) {
      return getSignedUrl(client, new GetObjectCommand({ Bucket: bucket, Key: blobKey(digest) }), { expiresIn: expiresInSeconds });
    },

    async createUpload() {
      const id = randomUUID();
      await client.send(new PutObjectCommand({ Bucket: bucket, Key: `${uploadPrefix(id)}start`, Body: "" }));
      return id;
    },

    async uploadSize(id) {
      if (!UPLOAD_ID.test(id)) return undefined;
      const chunks = await chunksOf(id);
      return chunks === undefined ? undefined : endOf(chunks);
    },

    async append(id, source, maxTotal, length) {
      const chunks = await chunksOf(id);
      if (chunks === undefined) throw new Error(`no upload ${id}`);
      const start = endOf(chunks);
      let total = start;
      let failure: unknown;
      async function* counted(input: AsyncIterable<Buffer>) {
        try {
          for await (const chunk of input) {
            total += chunk.length;
            if (length !== undefined && total - start > length) throw new ChunkLengthMismatch(length, total - start);
            if (total > maxTotal) throw new UploadTooLarge(maxTotal);
            yield chunk;
          }
          // Before the object is completed: a short chunk is never stored.
          if (length !== undefined && total - start !== length) throw new ChunkLengthMismatch(length, total - start);
        } catch (error) {
          failure ??= error;
          throw error;
        }
      }
      try {
        await writeObject(`${uploadPrefix(id)}${String(start).padStart(16, "0")}`, Readable.from(counted(source)), length ?? maxTotal - start);
      } catch (error) {
        source.resume(); // an unread rest of the body must not stall the connection
        throw failure ?? error;
      }
      return total;
    },

    async commit(id, digest) {
      const target = blobKey(digest);
      const chunks = await chunksOf(id);
      if (chunks === undefined) throw new Error(`no upload ${id}`);
      const algorithm = digestAlgorithm(digest);
      const hash = hashOf(algorithm);
      for (const chunk of chunks) for await (const bytes of await objectStream(chunk.key)) hash.update(bytes as Buffer);
      const actual = `${algorithm}:${hash.digest("hex")}`;
      if (actual !== digest) throw new DigestMismatch(digest, actual);
      const total = endOf(chunks);
      if ((await size(digest)) !== total) {
        if (chunks.length === 1 && total <= MAX_COPY_BYTES) {
          await client.send(new CopyObjectCommand({ Bucket: bucket, Key: target, CopySource: `${bucket}/${encodeURI(chunks[0].key)}` }));
        } else {
          async function* concatenated() {
            for (const chunk of chunks!) yield* await objectStream(chunk.key);
          }
          await writeObject(target, Readable.from(concatenated()), total);
        }
      }
      await removeUpload(id);
      return total;
    },

    removeUpload,

    async remove(digest) {
      await client.send(new DeleteObjectCommand({ Bucket: bucket, Key: blobKey(digest) }));
    },

    async put(bytes) {
      const digest = digestOf(bytes);
      if ((await size(digest)) === bytes.length) return digest;
      await client.send(new PutObjectCommand({ Bucket: bucket, Key: blobKey(digest), Body: bytes }));
      return digest;
    },

    /** Streams `source` into an upload of its own, then commits it (hashed, copied, the upload removed). */
    async putStream(source, digest) {
      blobKey(digest); // refuses a malformed digest before anything is written
      const id = await this.createUpload();
      try {
        await this.append(id, source, Number.MAX_SAFE_INTEGER);
        return await this.commit(id, digest);
      } catch (error) {
        await removeUpload(id);
        throw error;
      }
    },

    async removeStaleUploads(before) {
      const uploads = new Map<string, { newest: number; keys: string[] }>();
      for await (const item of listed(`${prefix}uploads/`)) {
        const id = item.key.slice(`${prefix}uploads/`.length).split("/")[0];
        const upload = uploads.get(id) ?? { newest: 0, keys: [] };
        upload.newest = Math.max(upload.newest, item.modified);
        upload.keys.push(item.key);
        uploads.set(id, upload);
      }
      const stale = [...uploads.values()].filter((upload) => upload.newest < before);
      await deleteKeys(stale.flatMap((upload) => upload.keys));
      return stale.length;
    },

    /** Throws StorageUnavailable when the bucket does not answer with these credentials (checked once at start). */
    async checkReachable() {
      try {
        await client.send(new HeadBucketCommand({ Bucket: bucket }));
      } catch (error) {
        const status = (error as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode;
        throw new StorageUnavailable(`s3://${bucket}/${prefix} does not answer: ${(error as Error).name}${status ? ` (HTTP ${status})` : ""}: ${(error as Error).message}`);
      }
    },
  };
}
