import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { promisify } from "node:util";
import { bootstrapChild, CHILD_API_URL, runCli, startChildServer, type ChildServer } from "../support/child-server.js";
import { buildImage, type BuiltImage } from "../support/oci-layout.js";
import { registryClient, sha256, type RegistryClient } from "../support/registry-push.js";
import { startS3Server, type TestS3 } from "../support/s3-server.js";
import { freePort, skopeoSkip } from "../support/skopeo.js";

/**
 * `serve --registry-storage s3://... --registry-storage-redirect` against a real S3-compatible
 * server (s3rver): a blob GET is answered with 307 to a presigned URL that serves the bytes to
 * anyone holding it; HEAD, manifests, refusals and unknown blobs are answered by the registry as
 * before. The registry's URL names `localhost` and the bucket's `127.0.0.1`, as a real bucket is
 * on another host: a client following the redirect does not send the registry's token there.
 * s3rver checks a presigned URL's expiry but not its V4 signature (real S3 checks both).
 * With the option off (the default), test/e2e/registry-s3.test.ts pulls the bytes from the registry.
 */
const dir = mkdtempSync(join(tmpdir(), "platform-api-registry-s3-redirect-"));
const db = join(dir, "platform.db");
const STORAGE = "registry/redirected";
let registryUrl: string;
let s3: TestS3;
let server: ChildServer;
let token: string;
let outsiderToken: string;
let registry: RegistryClient;
let image: BuiltImage;
let layer: Buffer;

/** A request to the registry that does not follow redirects. */
const request = (method: string, path: string, headers: Record<string, string> = {}) =>
  fetch(`${server.registryUrl}${path}`, { method, headers, redirect: "manual" });
const bearer = (t: string) => ({ authorization: `Bearer ${t}` });

before(async () => {
  s3 = await startS3Server();
  const port = await freePort();
  registryUrl = `http://localhost:${port}`;
  const boot = await bootstrapChild(db, "redir");
  const outsider = await bootstrapChild(db, "outsider");
  server = await startChildServer({
    db,
    registryDir: join(dir, "unused"),
    args: ["--registry-storage", `s3://${STORAGE}`, "--registry-storage-redirect", "--registry-port", String(port), "--registry-url", registryUrl],
    env: s3.env,
  });
  const issue = async (identity: string) => (await runCli("token", "--identity", identity, "--db", db, "--api-url", CHILD_API_URL, "--audience", registryUrl)).trim();
  token = await issue(boot.ownerUid);
  outsiderToken = await issue(outsider.ownerUid);
  registry = registryClient([server.registryUrl], token);
  layer = randomBytes(300_000);
  image = buildImage({ architecture: "amd64", label: "redirected" });
  await registry.pushBlob("redir/app", layer);
  await registry.pushImage("redir/app", "v1", image);
});
after(async () => {
  server?.child.kill("SIGTERM");
  await server?.exit;
  await s3?.close();
  rmSync(dir, { recursive: true, force: true });
});

test("a blob GET answers 307 to a presigned bucket URL that serves exactly the blob without the registry's token", { timeout: 60_000 }, async () => {
  const digest = sha256(layer);
  const res = await request("GET", `/v2/redir/app/blobs/${digest}`, bearer(token));
  assert.equal(res.status, 307);
  assert.equal(res.headers.get("docker-content-digest"), digest);
  assert.equal(res.headers.get("cache-control"), "no-store");
  assert.equal((await res.arrayBuffer()).byteLength, 0);
  const location = new URL(res.headers.get("location")!);
  assert.equal(location.origin, s3.endpoint, "the bucket's endpoint, from AWS_ENDPOINT_URL_S3");
  assert.equal(location.searchParams.get("X-Amz-Expires"), "1200", "20 minutes by default");

  const fetched = await fetch(location);
  assert.equal(fetched.status, 200);
  const bytes = Buffer.from(await fetched.arrayBuffer());
  assert.equal(sha256(bytes), digest);
  assert.ok(bytes.equals(layer));
});

test("--registry-storage-redirect-ttl sets the URL's lifetime; the bucket refuses it once expired", { timeout: 60_000 }, async () => {
  const short = await startChildServer({
    db,
    registryDir: join(dir, "unused"),
    args: ["--registry-storage", `s3://${STORAGE}`, "--registry-storage-redirect", "--registry-storage-redirect-ttl", "1s", "--registry-url", registryUrl],
    env: s3.env,
  });
  try {
    const res = await fetch(`${short.registryUrl}/v2/redir/app/blobs/${sha256(layer)}`, { headers: bearer(token), redirect: "manual" });
    assert.equal(res.status, 307);
    const location = new URL(res.headers.get("location")!);
    assert.equal(location.searchParams.get("X-Amz-Expires"), "1");
    await new Promise((resolve) => setTimeout(resolve, 2100));
    const expired = await fetch(location);
    assert.equal(expired.status, 403);
    assert.match(await expired.text(), /Request has expired/);
  } finally {
    short.child.kill("SIGTERM");
    await short.exit;
  }
});

test("a range GET is redirected as well, and the bucket answers the range", { timeout: 60_000 }, async () => {
  const res = await request("GET", `/v2/redir/app/blobs/${sha256(layer)}`, { ...bearer(token), range: "bytes=100-199" });
  assert.equal(res.status, 307);
  const part = await fetch(res.headers.get("location")!, { headers: { range: "bytes=100-199" } });
  assert.equal(part.status, 206);
  assert.ok(Buffer.from(await part.arrayBuffer()).equals(layer.subarray(100, 200)));
});

test("HEAD of a blob, a GET the client holds (If-None-Match) and GET of a manifest are answered by the registry, never redirected", { timeout: 60_000 }, async () => {
  const digest = sha256(layer);
  const head = await request("HEAD", `/v2/redir/app/blobs/${digest}`, bearer(token));
  assert.equal(head.status, 200);
  assert.equal(head.headers.get("content-length"), String(layer.length));
  assert.equal(head.headers.get("docker-content-digest"), digest);
  assert.equal(head.headers.get("location"), null);

  const held = await request("GET", `/v2/redir/app/blobs/${digest}`, { ...bearer(token), "if-none-match": `"${digest}"` });
  assert.equal(held.status, 304);
  assert.equal(held.headers.get("location"), null);

  for (const reference of ["v1", image.manifest.digest]) {
    const manifest = await request("GET", `/v2/redir/app/manifests/${reference}`, { ...bearer(token), accept: image.manifest.mediaType });
    assert.equal(manifest.status, 200, reference);
    assert.equal(manifest.headers.get("location"), null, reference);
    assert.ok(Buffer.from(await manifest.arrayBuffer()).equals(image.manifest.bytes), reference);
  }
});

test("a caller who may not pull gets 401 or 403, and an unknown blob 404: never a redirect", { timeout: 60_000 }, async () => {
  const path = `/v2/redir/app/blobs/${sha256(layer)}`;
  const anonymous = await request("GET", path);
  assert.equal(anonymous.status, 401);
  assert.match(anonymous.headers.get("www-authenticate") ?? "", /^Bearer realm=/);
  assert.equal(anonymous.headers.get("location"), null);

  // An owner of another organization: /token refuses it this repo, a registry token for its own
  // repo does not reach this one, and neither does its platform token.
  const tokenFor = (scope: string) =>
    fetch(`${server.registryUrl}/token?service=${encodeURIComponent(new URL(registryUrl).host)}&scope=${encodeURIComponent(scope)}`, {
      headers: { authorization: `Basic ${Buffer.from(`_token:${outsiderToken}`).toString("base64")}` },
    });
  assert.equal((await tokenFor("repository:redir/app:pull")).status, 403);
  const own = await tokenFor("repository:outsider/app:pull,push");
  assert.equal(own.status, 200);
  for (const credential of [((await own.json()) as { token: string }).token, outsiderToken]) {
    const outsider = await request("GET", path, bearer(credential));
    assert.equal(outsider.status, 403);
    assert.equal(outsider.headers.get("location"), null);
  }

  const unknown = await request("GET", `/v2/redir/app/blobs/${sha256(randomBytes(64))}`, bearer(token));
  assert.equal(unknown.status, 404);
  assert.equal(((await unknown.json()) as { errors: Array<{ code: string }> }).errors[0].code, "BLOB_UNKNOWN");
  assert.equal(unknown.headers.get("location"), null);
});

test("--registry-storage-redirect is refused without S3 storage (flag or REGISTRY_STORAGE_REDIRECT), and a TTL beyond 7d", { timeout: 120_000 }, async () => {
  const refused = (pattern: RegExp) => (e: { code: number; stderr: string }) => e.code === 2 && pattern.test(e.stderr);
  await assert.rejects(runCli("serve", "--db", db, "--registry-storage-redirect"), refused(/--registry-storage-redirect needs --registry-storage s3:/));
  process.env.REGISTRY_STORAGE_REDIRECT = "true";
  try {
    await assert.rejects(runCli("serve", "--db", db), refused(/--registry-storage-redirect needs --registry-storage s3:/));
  } finally {
    delete process.env.REGISTRY_STORAGE_REDIRECT;
  }
  await assert.rejects(
    runCli("serve", "--db", db, "--registry-storage", `s3://${STORAGE}`, "--registry-storage-redirect", "--registry-storage-redirect-ttl", "8d"),
    refused(/--registry-storage-redirect-ttl must be from 1s to 7d/),
  );
});

test("skopeo copies an image from the redirecting registry, following the redirects to the bucket", { skip: skopeoSkip, timeout: 120_000 }, async () => {
  const home = join(dir, "skopeo-home");
  const out = join(dir, "pulled");
  await promisify(execFile)(
    "skopeo",
    ["--insecure-policy", "copy", "--src-tls-verify=false", "--src-creds", `_token:${token}`, `docker://${new URL(registryUrl).host}/redir/app:v1`, `oci:${out}:v1`],
    { timeout: 90_000, env: { ...process.env, HOME: home } },
  );
  const blobs = readdirSync(join(out, "blobs", "sha256"));
  for (const blob of [image.config, ...image.layers]) {
    const hex = sha256(blob.bytes).slice("sha256:".length);
    assert.ok(blobs.includes(hex), hex);
    assert.ok(readFileSync(join(out, "blobs", "sha256", hex)).equals(blob.bytes), hex);
  }
});
