import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Readable } from "node:stream";
import { after, test } from "node:test";
import { ChunkLengthMismatch, createFileContentStore, DigestMismatch, UploadTooLarge } from "../../src/registry/content-store.js";

const root = mkdtempSync(join(tmpdir(), "platform-api-content-test-"));
after(() => rmSync(root, { recursive: true, force: true }));
const store = createFileContentStore(root);
const sha = (bytes: Buffer) => `sha256:${createHash("sha256").update(bytes).digest("hex")}`;
const text = async (stream: Readable) => {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString();
};

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
  writeFileSync(join(root, "uploads", "left-over"), "x");
  assert.ok((await store.removeStaleUploads(Date.now() + 1000)) >= 2);
  assert.deepEqual(readdirSync(join(root, "uploads")), []);
});

test("put stores bytes by digest, once", async () => {
  const bytes = Buffer.from("imported");
  const digest = await store.put(bytes);
  assert.equal(digest, sha(bytes));
  assert.equal(await store.put(bytes), digest);
  assert.equal(await text(store.read(digest)), "imported");
  assert.equal(await store.uploadSize("../../etc/passwd"), undefined, "ids are checked");
  assert.throws(() => store.read("sha256:../x"), /not a sha256 digest/);
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

test("remove deletes a blob's file; removing a missing one is a no-op", async () => {
  const digest = await store.put(Buffer.from("to be collected"));
  await store.remove(digest);
  assert.equal(await store.size(digest), undefined);
  await store.remove(digest);
});
