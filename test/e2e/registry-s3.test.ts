import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import SqliteDatabase from "better-sqlite3";
import { ListObjectsV2Command } from "@aws-sdk/client-s3";
import { bootstrapChild, CHILD_API_URL, runCli, startChildServer, type Bootstrapped, type ChildServer } from "../support/child-server.js";
import { buildImage } from "../support/oci-layout.js";
import { registryClient, sha256, type RegistryClient } from "../support/registry-push.js";
import { startS3Server, type TestS3 } from "../support/s3-server.js";

/**
 * `serve --registry-storage s3://<bucket>/<prefix>` against a real S3-compatible server (s3rver
 * from npm), configured by the standard AWS variables: a chunked push, pulls (whole and by
 * range), `registry gc` removing the objects of what no manifest names, and a bucket that does
 * not answer failing the start.
 */
const dir = mkdtempSync(join(tmpdir(), "platform-api-registry-s3-"));
const db = join(dir, "platform.db");
const REGISTRY_URL = "http://registry.test";
const STORAGE = "registry/platform/blobs";
let s3: TestS3;
let server: ChildServer;
let boot: Bootstrapped;
let registry: RegistryClient;
/** The chunked blob of the first test: no manifest names it. */
let chunked: Buffer;

const objects = async (prefix: string) => ((await s3.client().send(new ListObjectsV2Command({ Bucket: s3.bucket, Prefix: prefix }))).Contents ?? []).map((c) => c.Key!);

before(async () => {
  s3 = await startS3Server();
  // The CLI commands run below read the same variables.
  Object.assign(process.env, s3.env);
  boot = await bootstrapChild(db, "s3org");
  server = await startChildServer({ db, registryDir: join(dir, "unused"), args: ["--registry-storage", `s3://${STORAGE}`, "--registry-url", REGISTRY_URL] });
  const token = (await runCli("token", "--identity", boot.ownerUid, "--db", db, "--api-url", CHILD_API_URL, "--audience", REGISTRY_URL)).trim();
  registry = registryClient([server.registryUrl], token);
});
after(async () => {
  server?.child.kill("SIGTERM");
  await server?.exit;
  await s3?.close();
  rmSync(dir, { recursive: true, force: true });
});

test("a chunked push lands in the bucket, not on disk; pulls read it back whole and by range", { timeout: 120_000 }, async () => {
  const layer = (chunked = randomBytes(6 * 1024 * 1024 + 123));
  await registry.pushBlobInChunks("s3org/app", layer, 2 * 1024 * 1024);
  const image = buildImage({ architecture: "arm64", label: "s3" });
  await registry.pushImage("s3org/app", "v1", image);

  const digest = sha256(layer);
  const key = `platform/blobs/blobs/sha256/${digest.slice(7, 9)}/${digest.slice(7)}`;
  assert.ok((await objects("platform/blobs/blobs/")).includes(key), "the blob is an object under the prefix");
  assert.deepEqual(await objects("platform/blobs/uploads/"), [], "the finished upload's chunks are gone");
  assert.ok(!existsSync(join(dir, "unused")), "nothing was written to --registry-dir");

  const whole = await registry.request("GET", `/v2/s3org/app/blobs/${digest}`);
  assert.equal(whole.status, 200);
  assert.ok(whole.bytes.equals(layer));
  const part = await registry.request("GET", `/v2/s3org/app/blobs/${digest}`, { headers: { range: "bytes=100-199" } });
  assert.equal(part.status, 206);
  assert.ok(part.bytes.equals(layer.subarray(100, 200)));
  const manifest = await registry.request("GET", "/v2/s3org/app/manifests/v1", { headers: { accept: image.manifest.mediaType } });
  assert.equal(manifest.status, 200);
  assert.ok(manifest.bytes.equals(image.manifest.bytes));
});

test("registry gc on the bucket removes the objects of blobs no manifest names, and keeps the others", { timeout: 120_000 }, async () => {
  const orphan = randomBytes(1000);
  await registry.pushBlob("s3org/app", orphan);
  const kept = buildImage({ architecture: "amd64", label: "kept" });
  await registry.pushImage("s3org/app", "v2", kept);
  // Every blob looks last used two days ago (a push in progress would have marked its own).
  const file = new SqliteDatabase(db);
  file.prepare("update blobs set use_time = ?").run(Date.now() - 48 * 3600_000);
  file.close();

  const result = JSON.parse(await runCli("registry", "gc", "--db", db, "--registry-storage", `s3://${STORAGE}`)) as { blobs: number; bytes: number };
  assert.equal(result.blobs, 2, "the blobs no manifest names");
  assert.equal(result.bytes, orphan.length + chunked.length);
  const left = await objects("platform/blobs/blobs/");
  for (const gone of [orphan, chunked]) assert.ok(!left.some((key) => key.endsWith(sha256(gone).slice(7))), "their objects are gone");
  for (const blob of [kept.config, ...kept.layers]) assert.ok(left.some((key) => key.endsWith(sha256(blob.bytes).slice(7))), "named blobs stay");
  assert.equal((await registry.request("GET", `/v2/s3org/app/blobs/${sha256(kept.config.bytes)}`)).status, 200);
  assert.equal((await registry.request("GET", `/v2/s3org/app/blobs/${sha256(orphan)}`)).status, 404);
});

test("serve refuses to start when the bucket does not answer, and --registry-storage must be an s3:// URL", { timeout: 60_000 }, async () => {
  await assert.rejects(
    startChildServer({ db, registryDir: join(dir, "unused"), args: ["--registry-storage", "s3://no-such-bucket"] }),
    /no-such-bucket.*does not answer/,
  );
  await assert.rejects(runCli("registry", "gc", "--db", db, "--registry-storage", "/var/blobs"), (e: { code: number; stderr: string }) => e.code === 2 && /--registry-storage/.test(e.stderr));
});
