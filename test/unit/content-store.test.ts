import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PassThrough, Readable } from "node:stream";
import { after, before, describe, test } from "node:test";
import { ListObjectsV2Command, PutObjectCommand } from "@aws-sdk/client-s3";
import { ChunkLengthMismatch, createFileContentStore, DigestMismatch, UploadTooLarge, type ContentStore } from "../../src/domains/registry/content/content-store.js";
import { createS3ContentStore } from "../../src/domains/registry/content/s3-content-store.js";
import { InvalidStorageUrl, parseS3Url } from "../../src/domains/registry/content/s3-location.js";
import { startS3Server, type TestS3 } from "../support/s3-server.js";

/**
 * One suite for every content store: the filesystem one and the S3 one (against s3rver, a real
 * S3-compatible server). Each also passes a check of what it leaves where (files, objects).
 */
const sha = (bytes: Buffer) => `sha256:${createHash("sha256").update(bytes).digest("hex")}`;
const text = async (stream: Readable) => {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString();
};

interface Backend {
  name: string;
  open(): Promise<{ store: ContentStore; leaveStrayUpload(): Promise<void>; uploadsLeft(): Promise<string[]>; close(): Promise<void> }>;
}

const backends: Backend[] = [
  {
    name: "filesystem",
    async open() {
      const root = mkdtempSync(join(tmpdir(), "platform-api-content-test-"));
      return {
        store: createFileContentStore(root),
        leaveStrayUpload: async () => writeFileSync(join(root, "uploads", "left-over"), "x"),
        uploadsLeft: async () => readdirSync(join(root, "uploads")),
        close: async () => rmSync(root, { recursive: true, force: true }),
      };
    },
  },
  {
    name: "s3",
    async open() {
      const s3: TestS3 = await startS3Server();
      const client = s3.client();
      const prefix = "registry/";
      const keys = async (under: string) => ((await client.send(new ListObjectsV2Command({ Bucket: s3.bucket, Prefix: under }))).Contents ?? []).map((c) => c.Key!);
      return {
        store: createS3ContentStore({ bucket: s3.bucket, prefix }, client),
        leaveStrayUpload: async () => void (await client.send(new PutObjectCommand({ Bucket: s3.bucket, Key: `${prefix}uploads/left-over/0000000000000000`, Body: "x" }))),
        uploadsLeft: () => keys(`${prefix}uploads/`),
        close: async () => {
          client.destroy();
          await s3.close();
        },
      };
    },
  },
];

for (const backend of backends) {
  describe(`${backend.name} content store`, () => {
    let store: ContentStore;
    let opened: Awaited<ReturnType<Backend["open"]>>;
    before(async () => {
      opened = await backend.open();
      store = opened.store;
    });
    after(() => opened.close());

    test("chunks append in order; commit publishes the blob only when the digest matches", async () => {
      const id = await store.createUpload();
      assert.equal(await store.uploadSize(id), 0);
      assert.equal(await store.append(id, Readable.from([Buffer.from("hello ")]), 100), 6);
      assert.equal(await store.append(id, Readable.from([Buffer.from("world")]), 100), 11);
      const digest = sha(Buffer.from("hello world"));
      const wrong = sha(Buffer.from("other"));
      await assert.rejects(store.commit(id, wrong), DigestMismatch);
      assert.equal(await store.size(wrong), undefined, "a mismatch publishes nothing");
      assert.equal(await store.uploadSize(id), 11, "and keeps the upload");
      assert.equal(await store.commit(id, digest), 11);
      assert.equal(await store.size(digest), 11);
      assert.equal(await store.uploadSize(id), undefined, "the upload became the blob");
      assert.equal(await text(store.read(digest)), "hello world");
      assert.equal(await text(store.read(digest, { start: 6, end: 10 })), "world");
    });

    test("sha512: an upload commits under its sha512 digest (not its sha256), a stream is put by it, and each is read back by it", async () => {
      const bytes = Buffer.from("sha512 content");
      const digest512 = `sha512:${createHash("sha512").update(bytes).digest("hex")}`;
      const id = await store.createUpload();
      await store.append(id, Readable.from([bytes.subarray(0, 6)]), 100);
      await store.append(id, Readable.from([bytes.subarray(6)]), 100);
      await assert.rejects(store.commit(id, `sha512:${"0".repeat(128)}`), DigestMismatch);
      assert.equal(await store.commit(id, digest512), bytes.length);
      assert.equal(await text(store.read(digest512)), "sha512 content");
      assert.equal(await store.size(sha(bytes)), undefined, "stored under its sha512 only");
      const streamed = Buffer.from("streamed under sha512");
      const streamedDigest = `sha512:${createHash("sha512").update(streamed).digest("hex")}`;
      assert.equal(await store.putStream(Readable.from([streamed]), streamedDigest), streamed.length);
      assert.equal(await text(store.read(streamedDigest, { start: 9, end: 13 })), "under");
      await store.remove(digest512);
      assert.equal(await store.size(digest512), undefined);
    });

    test("a single-chunk upload and an empty one commit too", async () => {
      const one = await store.createUpload();
      await store.append(one, Readable.from([Buffer.from("single "), Buffer.from("chunk")]), 100);
      assert.equal(await store.commit(one, sha(Buffer.from("single chunk"))), 12);
      assert.equal(await text(store.read(sha(Buffer.from("single chunk")))), "single chunk");
      const empty = await store.createUpload();
      assert.equal(await store.commit(empty, sha(Buffer.alloc(0))), 0);
      assert.equal(await store.size(sha(Buffer.alloc(0))), 0);
      // The registry's answer of a zero-byte blob: the empty range (end before start) writes nothing and ends.
      const out = new PassThrough();
      const written = text(out);
      await store.writeTo(sha(Buffer.alloc(0)), { start: 0, end: -1 }, out);
      assert.equal(await written, "");
    });

    test("a blob larger than a multipart part streams through, chunk by chunk, and reads back whole", async () => {
      const part = Buffer.alloc(6 * 1024 * 1024);
      for (let i = 0; i < part.length; i += 4) part.writeUInt32LE(i, i);
      const whole = Buffer.concat([part, part.subarray(0, 1024 * 1024)]);
      const id = await store.createUpload();
      await store.append(id, Readable.from([part.subarray(0, 3_000_000), part.subarray(3_000_000)]), whole.length, part.length);
      await store.append(id, Readable.from([part.subarray(0, 1024 * 1024)]), whole.length);
      assert.equal(await store.commit(id, sha(whole)), whole.length);
      const back: Buffer[] = [];
      for await (const chunk of store.read(sha(whole))) back.push(chunk as Buffer);
      assert.ok(Buffer.concat(back).equals(whole));
      assert.equal(await text(store.read(sha(whole), { start: 8, end: 11 })), part.subarray(8, 12).toString());
    });

    test("a chunk over the limit, or a failing source, leaves the upload as it was", async () => {
      const id = await store.createUpload();
      await store.append(id, Readable.from([Buffer.from("12345")]), 8);
      await assert.rejects(store.append(id, Readable.from([Buffer.from("678"), Buffer.from("9")]), 8), UploadTooLarge);
      assert.equal(await store.uploadSize(id), 5);
      const failing = new Readable({
        read() {
          this.push(Buffer.from("ab"));
          this.destroy(new Error("client went away"));
        },
      });
      await assert.rejects(store.append(id, failing, 100), /client went away/);
      assert.equal(await store.uploadSize(id), 5);
      await store.removeUpload(id);
      assert.equal(await store.uploadSize(id), undefined);
    });

    test("an upload left behind (a crash mid-upload) is never a blob, and stale uploads are removed", async () => {
      const id = await store.createUpload();
      await store.append(id, Readable.from([Buffer.from("partial")]), 100);
      assert.equal(await store.size(sha(Buffer.from("partial"))), undefined);
      await opened.leaveStrayUpload();
      assert.equal(await store.removeStaleUploads(Date.now() - 60_000), 0, "recent uploads stay");
      assert.ok((await store.removeStaleUploads(Date.now() + 1000)) >= 2);
      assert.deepEqual(await opened.uploadsLeft(), []);
    });

    test("put stores bytes by digest, once", async () => {
      const bytes = Buffer.from("imported");
      const digest = await store.put(bytes);
      assert.equal(digest, sha(bytes));
      assert.equal(await store.put(bytes), digest);
      assert.equal(await text(store.read(digest)), "imported");
      assert.equal(await store.uploadSize("../../etc/passwd"), undefined, "ids are checked");
      assert.throws(() => store.read("sha256:../x"), /not a supported digest/);
    });

    test("a chunk of an announced length must be exactly that long; otherwise the upload is as it was", async () => {
      const id = await store.createUpload();
      await store.append(id, Readable.from([Buffer.from("abc")]), 100, 3);
      await assert.rejects(store.append(id, Readable.from([Buffer.from("de"), Buffer.from("fgh")]), 100, 4), ChunkLengthMismatch);
      assert.equal(await store.uploadSize(id), 3, "a longer chunk is cut off");
      await assert.rejects(store.append(id, Readable.from([Buffer.from("de")]), 100, 4), ChunkLengthMismatch);
      assert.equal(await store.uploadSize(id), 3, "so is a shorter one");
      assert.equal(await store.append(id, Readable.from([Buffer.from("de"), Buffer.from("fg")]), 100, 4), 7);
    });

    test("remove deletes a blob; removing a missing one is a no-op; reading a missing one fails with ENOENT", async () => {
      const digest = await store.put(Buffer.from("to be collected"));
      await store.remove(digest);
      assert.equal(await store.size(digest), undefined);
      await store.remove(digest);
      await assert.rejects(text(store.read(digest)), (e: NodeJS.ErrnoException) => e.code === "ENOENT");
    });
  });
}

test("s3:// URLs: bucket and prefix", () => {
  assert.deepEqual(parseS3Url("s3://blobs"), { bucket: "blobs", prefix: "" });
  assert.deepEqual(parseS3Url("s3://blobs/"), { bucket: "blobs", prefix: "" });
  assert.deepEqual(parseS3Url("s3://my.blobs-1/platform/registry/"), { bucket: "my.blobs-1", prefix: "platform/registry/" });
  for (const bad of ["s3:/blobs", "http://blobs/x", "s3://Blobs", "s3://b", "s3://blobs/a/../b", "s3://blobs?x=1", "s3://"]) {
    assert.throws(() => parseS3Url(bad), InvalidStorageUrl, bad);
  }
});

describe("filesystem content store: the hash an upload's appends keep", () => {
  const root = mkdtempSync(join(tmpdir(), "platform-api-content-hash-"));
  after(() => rmSync(root, { recursive: true, force: true }));
  const slow = (parts: string[]) =>
    Readable.from(
      (async function* () {
        for (const part of parts) {
          await new Promise((resolve) => setTimeout(resolve, 5));
          yield Buffer.from(part);
        }
      })(),
    );

  test("appends by two processes (two stores on one folder) commit to what the file holds", async () => {
    const [a, b] = [createFileContentStore(root), createFileContentStore(root)];
    const id = await a.createUpload();
    await a.append(id, Readable.from([Buffer.from("one ")]), 100);
    await b.append(id, Readable.from([Buffer.from("two ")]), 100);
    await a.append(id, Readable.from([Buffer.from("three")]), 100);
    await assert.rejects(a.commit(id, sha(Buffer.from("one three"))), DigestMismatch, "a's hash skipped b's bytes: it is not used");
    assert.equal(await a.commit(id, sha(Buffer.from("one two three"))), 13);
  });

  test("a failed append drops the hash; the next append and the commit still agree with the file", async () => {
    const store = createFileContentStore(root);
    const id = await store.createUpload();
    await store.append(id, Readable.from([Buffer.from("kept ")]), 100);
    await assert.rejects(store.append(id, Readable.from([Buffer.from("too long")]), 100, 3), ChunkLengthMismatch);
    await store.append(id, Readable.from([Buffer.from("bytes")]), 100);
    assert.equal(await store.commit(id, sha(Buffer.from("kept bytes"))), 10);
  });

  test("two appends to one upload at once: the commit checks the bytes on disk, not either append's hash", async () => {
    const store = createFileContentStore(root);
    const id = await store.createUpload();
    await Promise.all([store.append(id, slow(["aaaa", "bbbb"]), 100), store.append(id, slow(["cccc", "dddd"]), 100)]);
    const onDisk = readFileSync(join(root, "uploads", id));
    for (const claimed of ["aaaabbbb", "ccccdddd", "aaaabbbbccccdddd", "ccccddddaaaabbbb", "aaaacccc"]) {
      if (!onDisk.equals(Buffer.from(claimed))) await assert.rejects(store.commit(id, sha(Buffer.from(claimed))), DigestMismatch, claimed);
    }
    assert.equal(await store.commit(id, sha(onDisk)), onDisk.length);
  });
});
