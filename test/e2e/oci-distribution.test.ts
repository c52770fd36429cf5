import assert from "node:assert/strict";
import { createHash, randomBytes } from "node:crypto";
import { existsSync, readdirSync } from "node:fs";
import http from "node:http";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { decodeJwt } from "jose";
import { builtInRole } from "../../src/access/capabilities.js";
import { newChildUid } from "../../src/aip/uidp.js";
import { bootstrapOrganization } from "../../src/server/bootstrap.js";
import { MEDIA_TYPE } from "../../src/domains/registry/manifest.js";
import { insertGroup } from "../../src/domains/iam/store/groups.js";
import { insertIdentity } from "../../src/domains/iam/store/identities.js";
import { findRepoByPath } from "../../src/domains/registry/store/repos.js";
import { bindRole } from "../../src/domains/iam/store/role-bindings.js";
import { readTagHistory } from "../../src/domains/registry/store/tag-history.js";
import { blobOf, buildImage, indexOf, type Blob, type BuiltImage } from "../support/oci-layout.js";
import { startTestServer, type TestServer } from "../support/test-server.js";

/** The OCI Distribution API of the registry host, over plain HTTP, as registry clients use it. */

const MAX_BLOB = 64 * 1024;
let server: TestServer;
let folder: string;
/** Identities: `editor` on `folder` only; `puller` with registry.pull on the organization. */
let editorUid: string;
let pullerUid: string;

interface Answer {
  status: number;
  headers: Headers;
  bytes: Buffer;
  json: () => Record<string, unknown>;
}

const sha = (bytes: Buffer) => `sha256:${createHash("sha256").update(bytes).digest("hex")}`;

async function call(method: string, path: string, options: { token?: string; body?: Buffer | string; headers?: Record<string, string> } = {}): Promise<Answer> {
  const headers: Record<string, string> = { ...options.headers };
  if (options.token !== undefined) headers.authorization = `Bearer ${options.token}`;
  const body = Buffer.isBuffer(options.body) ? new Uint8Array(options.body) : options.body;
  const res = await fetch(`${server.registryUrl}${path}`, { method, headers, body });
  const bytes = Buffer.from(await res.arrayBuffer());
  return { status: res.status, headers: res.headers, bytes, json: () => JSON.parse(bytes.toString()) as Record<string, unknown> };
}

function assertError(answer: Answer, status: number, code: string): void {
  assert.equal(answer.status, status, answer.bytes.toString());
  assert.equal((answer.json().errors as Array<{ code: string }>)[0].code, code);
}

async function identity(group: string, role: "editor" | "registry.pull" | "owner", on: string): Promise<string> {
  const uid = newChildUid(group);
  await insertIdentity(server.store.db, { uid, group_uid: group, name: "someone", description: "", claim_match: "", static_keys: "", last_seen_time: null, create_time: 1, update_time: 1 });
  await bindRole(server.store.db, on, uid, builtInRole(role).uid, 1);
  return uid;
}

/** A registry token for `scopes`, as the identity (platform token for the registry audience) or anonymously. */
async function token(scopes: string[], subject?: string): Promise<string> {
  const headers: Record<string, string> = {};
  if (subject !== undefined) {
    const platform = await server.server.tokens.issue({ subject, audience: "http://registry.test" });
    headers.authorization = `Bearer ${platform.token}`;
  }
  const answer = await call("GET", `/token?${scopes.map((s) => `scope=${encodeURIComponent(s)}`).join("&")}`, { headers });
  assert.equal(answer.status, 200, answer.bytes.toString());
  return answer.json().token as string;
}
const pushToken = (name: string, subject = server.ownerUid) => token([`repository:${name}:pull,push`], subject);
const pullToken = (name: string, subject = server.ownerUid) => token([`repository:${name}:pull`], subject);

async function pushBlob(name: string, blob: Blob | Buffer, t: string): Promise<Answer> {
  const bytes = Buffer.isBuffer(blob) ? blob : blob.bytes;
  return call("POST", `/v2/${name}/blobs/uploads/?digest=${sha(bytes)}`, { token: t, body: bytes, headers: { "content-type": "application/octet-stream" } });
}

async function pushManifest(name: string, reference: string, manifest: Blob, t: string): Promise<Answer> {
  return call("PUT", `/v2/${name}/manifests/${reference}`, { token: t, body: manifest.bytes, headers: { "content-type": manifest.mediaType } });
}

async function pushImage(name: string, reference: string, image: BuiltImage, t: string): Promise<void> {
  for (const blob of [image.config, ...image.layers]) assert.equal((await pushBlob(name, blob, t)).status, 201);
  const answer = await pushManifest(name, reference, image.manifest, t);
  assert.equal(answer.status, 201, answer.bytes.toString());
}

before(async () => {
  server = await startTestServer({ limits: { maxBlobBytes: MAX_BLOB } });
  folder = newChildUid(server.org.uid);
  await insertGroup(server.store.db, { uid: folder, parent_uid: server.org.uid, name: "team", description: "", create_time: 1, update_time: 1 });
  editorUid = await identity(server.org.uid, "editor", folder);
  pullerUid = await identity(server.org.uid, "registry.pull", server.org.uid);
});
after(() => server.close());

describe("OCI Distribution API", () => {
  test("blobs: monolithic and chunked uploads; GET whole, by range, and HEAD", async () => {
    const t = await pushToken("acme/blobs");
    const small = randomBytes(1000);
    const created = await pushBlob("acme/blobs", small, t);
    assert.equal(created.status, 201);
    assert.equal(created.headers.get("location"), `/v2/acme/blobs/blobs/${sha(small)}`);
    assert.equal(created.headers.get("docker-content-digest"), sha(small));

    const big = randomBytes(3000);
    const started = await call("POST", "/v2/acme/blobs/blobs/uploads/", { token: t });
    assert.equal(started.status, 202);
    const location = started.headers.get("location")!;
    assert.match(location, /^\/v2\/acme\/blobs\/blobs\/uploads\/[0-9a-f-]{36}$/);
    assert.equal(started.headers.get("range"), "0-0");
    const first = await call("PATCH", location, { token: t, body: big.subarray(0, 1000), headers: { "content-range": "0-999" } });
    assert.equal(first.status, 202);
    assert.equal(first.headers.get("range"), "0-999");
    const outOfOrder = await call("PATCH", location, { token: t, body: big.subarray(2000), headers: { "content-range": "2000-2999" } });
    assertError(outOfOrder, 416, "BLOB_UPLOAD_INVALID");
    assert.equal((await call("PATCH", location, { token: t, body: big.subarray(1000, 2000) })).headers.get("range"), "0-1999");
    const status = await call("GET", location, { token: t });
    assert.equal(status.status, 204);
    assert.equal(status.headers.get("range"), "0-1999");
    assertError(await call("PUT", `${location}?digest=${sha(randomBytes(4))}`, { token: t, body: big.subarray(2000) }), 400, "DIGEST_INVALID");
    assert.equal((await call("PUT", `${location}?digest=${sha(big)}`, { token: t })).status, 201, "a refused PUT keeps the bytes it brought: the right digest finishes the upload");

    const read = await pullToken("acme/blobs");
    const whole = await call("GET", `/v2/acme/blobs/blobs/${sha(big)}`, { token: read });
    assert.equal(whole.status, 200);
    assert.deepEqual(whole.bytes, big);
    assert.equal(whole.headers.get("docker-content-digest"), sha(big));
    const part = await call("GET", `/v2/acme/blobs/blobs/${sha(big)}`, { token: read, headers: { range: "bytes=10-19" } });
    assert.equal(part.status, 206);
    assert.deepEqual(part.bytes, big.subarray(10, 20));
    assert.equal(part.headers.get("content-range"), "bytes 10-19/3000");
    assertError(await call("GET", `/v2/acme/blobs/blobs/${sha(big)}`, { token: read, headers: { range: "bytes=5000-" } }), 416, "BLOB_UNKNOWN");
    assert.equal((await call("GET", `/v2/acme/blobs/blobs/${sha(big)}`, { token: read, headers: { range: "bytes=5000-" } })).headers.get("content-range"), "bytes */3000");
    // The other forms of RFC 9110: open-ended, a last byte past the end (cut), the last N bytes.
    const ranged = async (range: string) => {
      const answer = await call("GET", `/v2/acme/blobs/blobs/${sha(big)}`, { token: read, headers: { range } });
      return { status: answer.status, range: answer.headers.get("content-range"), bytes: answer.bytes };
    };
    assert.deepEqual(await ranged("bytes=2990-"), { status: 206, range: "bytes 2990-2999/3000", bytes: big.subarray(2990) });
    assert.deepEqual(await ranged("bytes=2990-9999"), { status: 206, range: "bytes 2990-2999/3000", bytes: big.subarray(2990) });
    assert.deepEqual(await ranged("bytes=-5"), { status: 206, range: "bytes 2995-2999/3000", bytes: big.subarray(2995) });
    assert.deepEqual(await ranged("bytes=-5000"), { status: 206, range: "bytes 0-2999/3000", bytes: big });
    assert.equal((await ranged("bytes=-0")).status, 416);
    // What this server does not serve (several ranges, another unit, bad syntax) is ignored: the whole blob.
    for (const range of ["bytes=0-1,5-6", "items=0-1", "bytes=x-y", "bytes=20-10"]) assert.deepEqual(await ranged(range), { status: 200, range: null, bytes: big }, range);
    // If-None-Match with the blob's ETag (its digest) is 304, on GET and HEAD, without the bytes.
    for (const [method, header] of [["GET", `"${sha(big)}"`], ["HEAD", `W/"${sha(big)}"`], ["GET", `"sha256:${"0".repeat(64)}", "${sha(big)}"`], ["GET", "*"]]) {
      const cached = await call(method, `/v2/acme/blobs/blobs/${sha(big)}`, { token: read, headers: { "if-none-match": header } });
      assert.equal(cached.status, 304, `${method} ${header}`);
      assert.equal(cached.bytes.length, 0);
      assert.equal(cached.headers.get("etag"), `"${sha(big)}"`);
      assert.equal(cached.headers.get("docker-content-digest"), sha(big));
    }
    assert.equal((await call("GET", `/v2/acme/blobs/blobs/${sha(big)}`, { token: read, headers: { "if-none-match": `"sha256:${"0".repeat(64)}"` } })).status, 200);
    const head = await call("HEAD", `/v2/acme/blobs/blobs/${sha(small)}`, { token: read });
    assert.equal(head.status, 200);
    assert.equal(head.headers.get("content-length"), "1000");
    assert.equal(head.bytes.length, 0);
    assert.equal((await call("HEAD", `/v2/acme/blobs/blobs/${sha(randomBytes(8))}`, { token: read })).status, 404);
    assertError(await call("GET", `/v2/acme/blobs/blobs/${sha(randomBytes(8))}`, { token: read }), 404, "BLOB_UNKNOWN");
    assertError(await call("GET", "/v2/acme/blobs/blobs/sha256:XYZ", { token: read }), 400, "DIGEST_INVALID");
    assertError(await call("GET", `/v2/acme/blobs/blobs/${sha(big)}`, { token: await pushToken("acme/other") }), 403, "DENIED");
  });

  test("nothing half-written: a digest mismatch, an oversized blob, a cancelled upload, a client that goes away", async () => {
    const t = await pushToken("acme/safe");
    const bytes = randomBytes(500);
    const wrong = sha(randomBytes(500));
    assertError(await call("POST", `/v2/acme/safe/blobs/uploads/?digest=${wrong}`, { token: t, body: bytes }), 400, "DIGEST_INVALID");
    const tooBig = randomBytes(MAX_BLOB + 1);
    assertError(await pushBlob("acme/safe", tooBig, t), 413, "SIZE_INVALID");
    const read = await pullToken("acme/safe");
    for (const digest of [wrong, sha(bytes), sha(tooBig)]) assert.equal((await call("HEAD", `/v2/acme/safe/blobs/${digest}`, { token: read })).status, 404);

    const started = await call("POST", "/v2/acme/safe/blobs/uploads/", { token: t });
    const location = started.headers.get("location")!;
    assert.equal((await call("DELETE", location, { token: t })).status, 204);
    assertError(await call("GET", location, { token: t }), 404, "BLOB_UPLOAD_UNKNOWN");
    assertError(await call("PATCH", "/v2/acme/safe/blobs/uploads/not-an-upload", { token: t, body: "x" }), 404, "BLOB_UPLOAD_UNKNOWN");

    // A chunk cut off mid-body: the upload keeps only what came before it.
    const upload = (await call("POST", "/v2/acme/safe/blobs/uploads/", { token: t })).headers.get("location")!;
    await call("PATCH", upload, { token: t, body: bytes.subarray(0, 100) });
    await new Promise<void>((resolve) => {
      const req = http.request(`${server.registryUrl}${upload}`, { method: "PATCH", headers: { authorization: `Bearer ${t}`, "content-length": "400" } });
      req.on("error", () => resolve());
      req.write(bytes.subarray(100, 300), () => setTimeout(() => req.destroy(), 50));
      req.on("close", () => resolve());
    });
    await new Promise((r) => setTimeout(r, 100));
    assert.equal((await call("GET", upload, { token: t })).headers.get("range"), "0-99");
    assert.equal((await call("PUT", `${upload}?digest=${sha(bytes)}`, { token: t, body: bytes.subarray(100) })).status, 201);
  });

  test("a POST with an invalid digest, mount or from creates nothing: no repo, no upload row, no file", async () => {
    const uploadsDir = join(server.contentDir, "uploads");
    const files = () => (existsSync(uploadsDir) ? readdirSync(uploadsDir).length : 0);
    const rows = async () => (await server.store.db.selectFrom("uploads").select("id").execute()).length;
    const [filesBefore, rowsBefore] = [files(), await rows()];
    const t = await pushToken("acme/never-made");
    for (const query of ["digest=sha256:XYZ", "digest=md5:abc", "mount=sha256:short", `mount=${sha(Buffer.from("x"))}&from=Not/Valid`]) {
      const answer = await call("POST", `/v2/acme/never-made/blobs/uploads/?${query}`, { token: t, body: randomBytes(64) });
      assert.equal(answer.status, 400, `${query}: ${answer.bytes.toString()}`);
    }
    assertError(await call("POST", "/v2/acme/never-made/blobs/uploads/?digest=sha256:XYZ", { token: t, body: "x" }), 400, "DIGEST_INVALID");
    assert.equal(files(), filesBefore);
    assert.equal(await rows(), rowsBefore);
    assert.equal(await findRepoByPath(server.store.db, "acme", "never-made"), undefined);
  });

  test("PATCH: a Content-Range that does not match the body is 416 and leaves the upload as it was", async () => {
    const t = await pushToken("acme/ranges");
    const bytes = randomBytes(600);
    const location = (await call("POST", "/v2/acme/ranges/blobs/uploads/", { token: t })).headers.get("location")!;
    assert.equal((await call("PATCH", location, { token: t, body: bytes.subarray(0, 100), headers: { "content-range": "0-99" } })).status, 202);
    // Declared by Content-Length: refused before any byte is read.
    for (const range of ["100-299", "100-150", "100-99", "100-"]) {
      const answer = await call("PATCH", location, { token: t, body: bytes.subarray(100, 200), headers: { "content-range": range } });
      assertError(answer, 416, "BLOB_UPLOAD_INVALID");
      assert.equal(answer.headers.get("range"), "0-99", range);
      assert.equal(answer.headers.get("location"), location);
    }
    // Streamed without a length (chunked): the bytes read are cut off again, longer or shorter.
    const chunked = (body: Buffer, range: string) =>
      new Promise<{ status: number; range: string | undefined; body: string }>((resolve, reject) => {
        const req = http.request(`${server.registryUrl}${location}`, {
          method: "PATCH",
          headers: { authorization: `Bearer ${t}`, "content-range": range, "transfer-encoding": "chunked" },
        });
        req.on("response", (res) => {
          let text = "";
          res.on("data", (c: Buffer) => (text += c.toString()));
          res.on("end", () => resolve({ status: res.statusCode!, range: res.headers.range, body: text }));
        });
        req.on("error", reject);
        req.write(body.subarray(0, 50));
        req.end(body.subarray(50));
      });
    for (const [body, range] of [[bytes.subarray(100, 300), "100-199"], [bytes.subarray(100, 150), "100-199"]] as const) {
      const answer = await chunked(body, range);
      assert.equal(answer.status, 416, answer.body);
      assert.equal((JSON.parse(answer.body) as { errors: Array<{ code: string }> }).errors[0].code, "BLOB_UPLOAD_INVALID");
      assert.equal((await call("GET", location, { token: t })).headers.get("range"), "0-99");
    }
    const fitting = await chunked(bytes.subarray(100, 300), "100-299");
    assert.equal(fitting.status, 202, fitting.body);
    assert.equal(fitting.range, "0-299");
    assert.equal((await call("PATCH", location, { token: t, body: bytes.subarray(300), headers: { "content-range": "300-599" } })).headers.get("range"), "0-599");
    assert.equal((await call("PUT", `${location}?digest=${sha(bytes)}`, { token: t })).status, 201);
    assert.deepEqual((await call("GET", `/v2/acme/ranges/blobs/${sha(bytes)}`, { token: t })).bytes, bytes);
  });

  test("manifests: the images they name must be there; by tag and by digest; Docker media types; delete", async () => {
    const t = await pushToken("acme/app");
    const image = buildImage({ architecture: "amd64" });
    assertError(await pushManifest("acme/app", "v1", image.manifest, t), 400, "MANIFEST_BLOB_UNKNOWN");
    await pushImage("acme/app", "v1", image, t);
    const read = await pullToken("acme/app");
    for (const reference of ["v1", image.manifest.digest]) {
      const got = await call("GET", `/v2/acme/app/manifests/${reference}`, { token: read, headers: { accept: MEDIA_TYPE.ociManifest } });
      assert.equal(got.status, 200);
      assert.deepEqual(got.bytes, image.manifest.bytes, "the bytes pushed, unchanged");
      assert.equal(got.headers.get("content-type"), MEDIA_TYPE.ociManifest);
      assert.equal(got.headers.get("docker-content-digest"), image.manifest.digest);
      const head = await call("HEAD", `/v2/acme/app/manifests/${reference}`, { token: read });
      assert.equal(head.status, 200);
      assert.equal(head.headers.get("content-length"), String(image.manifest.size));
      // A client holding the digest it has (a tag's current one) gets 304; another digest, the bytes.
      const same = await call("GET", `/v2/acme/app/manifests/${reference}`, { token: read, headers: { "if-none-match": `"${image.manifest.digest}"` } });
      assert.deepEqual([same.status, same.bytes.length, same.headers.get("docker-content-digest")], [304, 0, image.manifest.digest]);
      assert.equal((await call("GET", `/v2/acme/app/manifests/${reference}`, { token: read, headers: { "if-none-match": `"${sha(randomBytes(3))}"` } })).status, 200);
    }
    assertError(await call("GET", "/v2/acme/app/manifests/nope", { token: read }), 404, "MANIFEST_UNKNOWN");
    assertError(await call("GET", `/v2/acme/app/manifests/${sha(randomBytes(3))}`, { token: read }), 404, "MANIFEST_UNKNOWN");
    // A repository not there yet: /token grants pull on its name (less than asked is no error), the calls answer for it.
    const forNothing = await call("GET", "/token?scope=repository:acme/nothing:pull", { headers: { authorization: `Bearer ${(await server.server.tokens.issue({ subject: server.ownerUid, audience: "http://registry.test" })).token}` } });
    assert.equal(forNothing.status, 200, forNothing.bytes.toString());
    const nothing = forNothing.json().token as string;
    assertError(await call("GET", "/v2/acme/nothing/tags/list", { token: nothing }), 404, "NAME_UNKNOWN");
    assertError(await call("GET", `/v2/acme/nothing/blobs/${sha(randomBytes(3))}`, { token: nothing }), 404, "NAME_UNKNOWN");
    const noReferrers = await call("GET", `/v2/acme/nothing/referrers/${sha(randomBytes(3))}`, { token: nothing });
    assert.equal(noReferrers.status, 200);
    assert.equal(noReferrers.headers.get("content-type"), MEDIA_TYPE.ociIndex);
    assert.deepEqual(noReferrers.json(), { schemaVersion: 2, mediaType: MEDIA_TYPE.ociIndex, manifests: [] });
    assertError(await pushManifest("acme/app", image.layers[0].digest, image.manifest, t), 400, "DIGEST_INVALID");
    // A descriptor stating another size than the stored blob's (sizes feed GetImageSize) is refused.
    const lying = JSON.parse(image.manifest.bytes.toString()) as { layers: Array<{ size: number }> };
    lying.layers[0].size += 1_000_000;
    const lyingBlob = blobOf(Buffer.from(JSON.stringify(lying)), image.manifest.mediaType);
    const refused = await pushManifest("acme/app", "lying", lyingBlob, t);
    assertError(refused, 400, "MANIFEST_INVALID");
    assert.match(refused.bytes.toString(), /is \d+ bytes, not \d+/);
    assertError(await call("PUT", "/v2/acme/app/manifests/v2", { token: t, body: "{}", headers: { "content-type": MEDIA_TYPE.ociManifest } }), 400, "MANIFEST_INVALID");
    assertError(await pushManifest("acme/app", "-bad", image.manifest, t), 400, "TAG_INVALID");
    assertError(await call("PUT", "/v2/acme/app/manifests/big", { token: t, body: Buffer.alloc(4 * 1024 * 1024 + 1, 32) }), 413, "SIZE_INVALID");

    // A Docker schema 2 manifest keeps its media type.
    const docker = blobOf(
      Buffer.from(JSON.stringify({ ...JSON.parse(image.manifest.bytes.toString()), mediaType: MEDIA_TYPE.dockerManifest })),
      MEDIA_TYPE.dockerManifest,
    );
    assert.equal((await pushManifest("acme/app", "docker", docker, t)).status, 201);
    assert.equal((await call("GET", "/v2/acme/app/manifests/docker", { token: read })).headers.get("content-type"), MEDIA_TYPE.dockerManifest);

    const del = await token(["repository:acme/app:delete"], server.ownerUid);
    assertError(await call("DELETE", "/v2/acme/app/manifests/docker", { token: read }), 403, "DENIED");
    assert.equal((await call("DELETE", "/v2/acme/app/manifests/docker", { token: del })).status, 202);
    assertError(await call("GET", "/v2/acme/app/manifests/docker", { token: read }), 404, "MANIFEST_UNKNOWN");
    assert.equal((await call("GET", `/v2/acme/app/manifests/${docker.digest}`, { token: read })).status, 200, "deleting a tag keeps the manifest");
    assert.equal((await call("DELETE", `/v2/acme/app/manifests/${docker.digest}`, { token: del })).status, 202);
    assertError(await call("GET", `/v2/acme/app/manifests/${docker.digest}`, { token: read }), 404, "MANIFEST_UNKNOWN");
    assertError(await call("DELETE", `/v2/acme/app/manifests/${docker.digest}`, { token: del }), 404, "MANIFEST_UNKNOWN");
  });

  test("a push that moves a tag is a tag change: history, ListTags and ImagesService see it", async () => {
    const t = await pushToken("acme/moving");
    const amd = buildImage({ architecture: "amd64", label: "1" });
    const arm = buildImage({ architecture: "arm64", label: "1" });
    await pushImage("acme/moving", amd.manifest.digest, amd, t);
    await pushImage("acme/moving", arm.manifest.digest, arm, t);
    const index = indexOf([amd, arm]);
    assert.equal((await pushManifest("acme/moving", "latest", index, t)).status, 201);
    const next = buildImage({ architecture: "amd64", label: "2" });
    await pushImage("acme/moving", "latest", next, t);

    const repo = await findRepoByPath(server.store.db, "acme", "moving");
    assert.ok(repo);
    assert.deepEqual((await readTagHistory(server.store.db, repo.uid, "latest", { limit: 10 })).map((h) => h.digest), [index.digest, next.manifest.digest]);
    const auth = { authorization: `Bearer ${server.ownerToken}`, "content-type": "application/json" };
    const tags = (await (await fetch(`${server.apiUrl}/registry/v2/tags?uidp.children_of=${repo.uid}`, { headers: auth })).json()) as { tags: Array<{ name: string; digest: string }> };
    assert.deepEqual(tags.tags.map((x) => [x.name, x.digest]), [["latest", next.manifest.digest]]);
    const archs = (await (await fetch(`${server.apiUrl}/registry/v2/repos/${repo.uid}/digests/${index.digest}/architectures`, { headers: auth })).json()) as { architectures: string[] };
    assert.deepEqual(archs.architectures, ["amd64", "arm64"]);
    const size = (await (await fetch(`${server.apiUrl}/registry/v2/repos/${repo.uid}/digests/${index.digest}/size?architecture=arm64`, { headers: auth })).json()) as { size: string };
    assert.equal(size.size, String(arm.imageSize));
    const history = await call("GET", "/v2/acme/moving/_service/history/latest", { token: await pullToken("acme/moving") });
    assert.deepEqual((history.json().history as Array<{ digest: string }>).map((h) => h.digest), [index.digest, next.manifest.digest]);

    // A tag the API marked deprecated stays deprecated when a push moves it.
    await fetch(`${server.apiUrl}/registry/v2/tags/${repo.uid}`, { method: "POST", headers: auth, body: JSON.stringify({ name: "latest", digest: next.manifest.digest, deprecated: true }) });
    await pushImage("acme/moving", "latest", amd, t);
    const moved = (await (await fetch(`${server.apiUrl}/registry/v2/tags?uidp.children_of=${repo.uid}`, { headers: auth })).json()) as { tags: Array<{ digest: string; deprecated?: boolean }> };
    assert.deepEqual(moved.tags.map((x) => [x.digest, x.deprecated]), [[amd.manifest.digest, true]]);

  });

  test("tags/list: byte order, n and last, a Link to the next page", async () => {
    const t = await pushToken("acme/many");
    const image = buildImage({ architecture: "amd64" });
    await pushImage("acme/many", "b", image, t);
    for (const tag of ["a", "c", "B", "a.1"]) assert.equal((await pushManifest("acme/many", tag, image.manifest, t)).status, 201);
    const read = await pullToken("acme/many");
    const all = await call("GET", "/v2/acme/many/tags/list", { token: read });
    assert.deepEqual(all.json(), { name: "acme/many", tags: ["B", "a", "a.1", "b", "c"] });
    assert.equal(all.headers.get("link"), null);
    const page = await call("GET", "/v2/acme/many/tags/list?n=2&last=a", { token: read });
    assert.deepEqual(page.json().tags, ["a.1", "b"]);
    assert.equal(page.headers.get("link"), '</v2/acme/many/tags/list?n=2&last=b>; rel="next"');
    assert.deepEqual((await call("GET", "/v2/acme/many/tags/list?n=2&last=b", { token: read })).json().tags, ["c"]);
    assert.deepEqual((await call("GET", "/v2/acme/many/tags/list?n=0", { token: read })).json().tags, []);
    assertError(await call("GET", "/v2/acme/many/tags/list?n=-1", { token: read }), 400, "INVALID_ARGUMENT");
  });

  test("referrers: manifests whose subject is a digest, filtered by artifactType", async () => {
    const t = await pushToken("acme/signed");
    const image = buildImage({ architecture: "amd64" });
    await pushImage("acme/signed", "v1", image, t);
    const empty = blobOf(Buffer.from("{}"), "application/vnd.oci.empty.v1+json");
    assert.equal((await pushBlob("acme/signed", empty, t)).status, 201);
    const artifact = (type: string) =>
      blobOf(
        Buffer.from(
          JSON.stringify({
            schemaVersion: 2,
            mediaType: MEDIA_TYPE.ociManifest,
            artifactType: type,
            config: { mediaType: empty.mediaType, digest: empty.digest, size: empty.size },
            layers: [{ mediaType: empty.mediaType, digest: empty.digest, size: empty.size }],
            subject: { mediaType: image.manifest.mediaType, digest: image.manifest.digest, size: image.manifest.size },
            annotations: { "org.example.kind": type },
          }),
        ),
        MEDIA_TYPE.ociManifest,
      );
    const sbom = artifact("application/spdx+json");
    const sig = artifact("application/vnd.dev.sigstore.bundle+json");
    for (const a of [sbom, sig]) {
      const pushed = await pushManifest("acme/signed", a.digest, a, t);
      assert.equal(pushed.status, 201);
      assert.equal(pushed.headers.get("oci-subject"), image.manifest.digest);
    }
    const read = await pullToken("acme/signed");
    const all = await call("GET", `/v2/acme/signed/referrers/${image.manifest.digest}`, { token: read });
    assert.equal(all.status, 200);
    assert.equal(all.headers.get("content-type"), MEDIA_TYPE.ociIndex);
    const body = all.json() as { manifests: Array<{ digest: string; artifactType: string; annotations: Record<string, string> }> };
    assert.deepEqual(body.manifests.map((m) => m.digest).sort(), [sbom.digest, sig.digest].sort());
    assert.equal(body.manifests.find((m) => m.digest === sbom.digest)?.annotations["org.example.kind"], "application/spdx+json");
    const filtered = await call("GET", `/v2/acme/signed/referrers/${image.manifest.digest}?artifactType=application/spdx%2Bjson`, { token: read });
    assert.equal(filtered.headers.get("oci-filters-applied"), "artifactType");
    assert.deepEqual((filtered.json().manifests as Array<{ digest: string }>).map((m) => m.digest), [sbom.digest]);
    assert.deepEqual((await call("GET", `/v2/acme/signed/referrers/${sha(randomBytes(2))}`, { token: read })).json().manifests, []);
  });

  test("cross-repo mount: 201 when the token may pull the source, an ordinary upload (202) otherwise", async () => {
    const source = await pushToken("acme/source");
    const blob = randomBytes(200);
    await pushBlob("acme/source", blob, source);
    const both = await token(["repository:acme/target:pull,push", "repository:acme/source:pull"], server.ownerUid);
    const mounted = await call("POST", `/v2/acme/target/blobs/uploads/?mount=${sha(blob)}&from=acme/source`, { token: both });
    assert.equal(mounted.status, 201);
    assert.equal(mounted.headers.get("location"), `/v2/acme/target/blobs/${sha(blob)}`);
    assert.deepEqual((await call("GET", `/v2/acme/target/blobs/${sha(blob)}`, { token: both })).bytes, blob);
    // A token never asked for the source: 401 naming both scopes, as distribution answers, so the client asks for both.
    const both2 = 'scope="repository:acme/target2:pull,push repository:acme/source:pull"';
    const targetOnly = await pushToken("acme/target2");
    const unasked = await call("POST", `/v2/acme/target2/blobs/uploads/?mount=${sha(blob)}&from=acme/source`, { token: targetOnly });
    assertError(unasked, 401, "UNAUTHORIZED");
    assert.equal(unasked.headers.get("www-authenticate"), `Bearer realm="http://registry.test/token",service="registry.test",${both2},error="insufficient_scope"`);
    const bare = await call("POST", `/v2/acme/target2/blobs/uploads/?mount=${sha(blob)}&from=acme/source`);
    assertError(bare, 401, "UNAUTHORIZED");
    assert.equal(bare.headers.get("www-authenticate"), `Bearer realm="http://registry.test/token",service="registry.test",${both2}`);
    // A caller who may not pull the source (the editor of a folder, the organization's source): an ordinary upload (202).
    const auth = { authorization: `Bearer ${server.ownerToken}`, "content-type": "application/json" };
    await fetch(`${server.apiUrl}/registry/v2/repos/${folder}`, { method: "POST", headers: auth, body: JSON.stringify({ name: "team-mount" }) });
    const refusedSource = await token(["repository:acme/team-mount:pull,push", "repository:acme/source:pull"], editorUid);
    assert.deepEqual(decodeJwt(refusedSource).access, [{ type: "repository", name: "acme/team-mount", actions: ["pull", "push"] }]);
    const refused = await call("POST", `/v2/acme/team-mount/blobs/uploads/?mount=${sha(blob)}&from=acme/source`, { token: refusedSource });
    assert.equal(refused.status, 202);
    assert.match(refused.headers.get("location")!, /\/blobs\/uploads\//);
  });

  test("an upload's status needs pull, its cancelling push or delete; a blob is deleted from a repo by a caller who may delete", async () => {
    const push = await pushToken("acme/uploads");
    const started = await call("POST", "/v2/acme/uploads/blobs/uploads/", { token: push });
    const location = started.headers.get("location")!;
    const pull = await pullToken("acme/uploads", pullerUid);
    const status = await call("GET", location, { token: pull });
    assert.equal(status.status, 204);
    assert.equal(status.headers.get("range"), "0-0");
    assertError(await call("DELETE", location, { token: pull }), 403, "DENIED");
    const deleter = await token(["repository:acme/uploads:delete"], server.ownerUid);
    assert.equal((await call("DELETE", location, { token: deleter })).status, 204);

    const blob = randomBytes(300);
    assert.equal((await pushBlob("acme/uploads", blob, push)).status, 201);
    assertError(await call("DELETE", `/v2/acme/uploads/blobs/${sha(blob)}`, { token: pull }), 403, "DENIED");
    const deleted = await call("DELETE", `/v2/acme/uploads/blobs/${sha(blob)}`, { token: deleter });
    assert.equal(deleted.status, 202);
    assert.equal(deleted.headers.get("docker-content-digest"), sha(blob));
    assert.equal((await call("HEAD", `/v2/acme/uploads/blobs/${sha(blob)}`, { token: pull })).status, 404);
    assertError(await call("GET", `/v2/acme/uploads/blobs/${sha(blob)}`, { token: pull }), 404, "BLOB_UNKNOWN");
    assertError(await call("DELETE", `/v2/acme/uploads/blobs/${sha(blob)}`, { token: deleter }), 404, "BLOB_UNKNOWN");
    assertError(await call("DELETE", `/v2/acme/uploads/blobs/sha256:XYZ`, { token: deleter }), 400, "DIGEST_INVALID");
    // Pushed again, it is served again.
    assert.equal((await pushBlob("acme/uploads", blob, push)).status, 201);
    assert.deepEqual((await call("GET", `/v2/acme/uploads/blobs/${sha(blob)}`, { token: pull })).bytes, blob);
  });

  test("who may push: creating a repo needs create rights on the organization; pull-only callers are denied", async () => {
    // The editor of a folder may not create repos in the organization: push is left out of its token.
    const answer = await call("GET", "/token?scope=repository:acme/editors-new:pull,push", {
      headers: { authorization: `Bearer ${(await server.server.tokens.issue({ subject: editorUid, audience: "http://registry.test" })).token}` },
    });
    assertError(answer, 403, "DENIED");
    // In a repo of its folder, it may push.
    const auth = { authorization: `Bearer ${server.ownerToken}`, "content-type": "application/json" };
    await fetch(`${server.apiUrl}/registry/v2/repos/${folder}`, { method: "POST", headers: auth, body: JSON.stringify({ name: "team-app" }) });
    const editor = await pushToken("acme/team-app", editorUid);
    await pushImage("acme/team-app", "v1", buildImage({ architecture: "amd64" }), editor);
    // registry.pull gets pull only, and a push with it is DENIED.
    const puller = await token(["repository:acme/team-app:pull,push"], pullerUid);
    assertError(await call("POST", "/v2/acme/team-app/blobs/uploads/", { token: puller }), 403, "DENIED");
    assertError(await call("PUT", "/v2/acme/team-app/manifests/v2", { token: puller, body: "{}" }), 403, "DENIED");
    assert.equal((await call("GET", "/v2/acme/team-app/manifests/v1", { token: puller })).status, 200);
    // No token: 401 with a challenge naming pull and push.
    const bare = await call("POST", "/v2/acme/team-app/blobs/uploads/");
    assertError(bare, 401, "UNAUTHORIZED");
    assert.equal(bare.headers.get("www-authenticate"), 'Bearer realm="http://registry.test/token",service="registry.test",scope="repository:acme/team-app:pull,push"');
    // A repo name that cannot be created.
    assertError(await call("POST", "/v2/acme/Caps/blobs/uploads/", { token: await pushToken("acme/Caps") }), 400, "NAME_INVALID");
  });

  test("the free tier: latest and latest-dev of a public image, by tag and by the digests of their history, anonymously", async () => {
    const { organization, identity: publicOwner } = await bootstrapOrganization(server.store, "public", Date.now());
    assert.ok(organization);
    const t = await pushToken("public/base", publicOwner.uid);
    const amd = buildImage({ architecture: "amd64", label: "a" });
    const arm = buildImage({ architecture: "arm64", label: "a" });
    await pushImage("public/base", amd.manifest.digest, amd, t);
    await pushImage("public/base", arm.manifest.digest, arm, t);
    const index = indexOf([amd, arm]);
    assert.equal((await pushManifest("public/base", "latest", index, t)).status, 201);
    const other = buildImage({ architecture: "amd64", label: "other" });
    await pushImage("public/base", "v1", other, t);
    const newer = buildImage({ architecture: "amd64", label: "newer" });
    await pushImage("public/base", "latest", newer, t);

    const anonymous = await token(["repository:public/base:pull"]);
    assert.equal((await call("GET", "/v2/public/base/manifests/latest", { token: anonymous })).status, 200);
    // Pinned: an older digest of latest's history, and an image of that index.
    assert.equal((await call("GET", `/v2/public/base/manifests/${index.digest}`, { token: anonymous })).status, 200);
    assert.equal((await call("GET", `/v2/public/base/manifests/${arm.manifest.digest}`, { token: anonymous })).status, 200);
    assert.equal((await call("GET", `/v2/public/base/blobs/${arm.layers[0].digest}`, { token: anonymous })).status, 200);
    assertError(await call("GET", "/v2/public/base/manifests/v1", { token: anonymous }), 403, "DENIED");
    assertError(await call("GET", `/v2/public/base/manifests/${other.manifest.digest}`, { token: anonymous }), 403, "DENIED");
    assert.deepEqual((await call("GET", "/v2/public/base/tags/list", { token: anonymous })).json().tags, ["latest"]);
    // Anonymous callers never get push, even when they ask for it.
    const asked = await call("GET", "/token?scope=repository:public/base:pull,push");
    const claims = JSON.parse(Buffer.from((asked.json().token as string).split(".")[1], "base64url").toString()) as { access: Array<{ actions: string[] }> };
    assert.deepEqual(claims.access[0].actions, ["pull"]);
    assertError(await call("POST", "/v2/public/base/blobs/uploads/", { token: anonymous }), 403, "DENIED");
  });

  test("a platform token for the registry audience works on every endpoint without /token, judged by role bindings", async () => {
    const platform = async (subject: string, audience = "http://registry.test") => (await server.server.tokens.issue({ subject, audience })).token;
    const owner = await platform(server.ownerUid);
    // Push with it too (the owner may create the repo), then read every kind of thing back.
    const image = buildImage({ architecture: "amd64", label: "direct" });
    await pushImage("acme/direct", "v1", image, owner);
    const layer = image.layers[0].digest;
    const reads = [
      ["GET", `/v2/acme/direct/manifests/v1`],
      ["HEAD", `/v2/acme/direct/manifests/${image.manifest.digest}`],
      ["GET", `/v2/acme/direct/blobs/${layer}`],
      ["HEAD", `/v2/acme/direct/blobs/${layer}`],
      ["GET", "/v2/acme/direct/tags/list"],
      ["GET", `/v2/acme/direct/referrers/${image.manifest.digest}`],
      ["GET", "/v2/acme/direct/_service/history/v1"],
    ] as const;
    const stranger = newChildUid(server.org.uid);
    await insertIdentity(server.store.db, { uid: stranger, group_uid: server.org.uid, name: "stranger", description: "", claim_match: "", static_keys: "", last_seen_time: null, create_time: 1, update_time: 1 });
    for (const [method, path] of reads) {
      for (const subject of [server.ownerUid, pullerUid]) {
        const answer = await call(method, path, { token: await platform(subject) });
        assert.equal(answer.status, 200, `${method} ${path}: ${answer.bytes.toString()}`);
      }
      const denied = await call(method, path, { token: await platform(stranger) });
      assert.equal(denied.status, 403, `${method} ${path}`);
      if (method === "GET") assertError(denied, 403, "DENIED");
      assert.equal((await call(method, path, { token: await platform(server.ownerUid, "http://api.test") })).status, 403, `${method} ${path}`);
      const bare = await call(method, path);
      assert.equal(bare.status, 401, `${method} ${path}`);
      assert.equal(bare.headers.get("www-authenticate"), 'Bearer realm="http://registry.test/token",service="registry.test",scope="repository:acme/direct:pull"');
    }
    assert.deepEqual((await call("GET", `/v2/acme/direct/blobs/${layer}`, { token: await platform(pullerUid) })).bytes, image.layers[0].bytes);
    // The organization's puller learns that a repo is missing; a stranger does not.
    assertError(await call("GET", "/v2/acme/nothing-here/tags/list", { token: await platform(pullerUid) }), 404, "NAME_UNKNOWN");
    assertError(await call("GET", "/v2/acme/nothing-here/tags/list", { token: await platform(stranger) }), 403, "DENIED");
    // Writes are judged the same way: pull-only callers may not push or delete.
    assertError(await call("POST", "/v2/acme/direct/blobs/uploads/", { token: await platform(pullerUid) }), 403, "DENIED");
    assertError(await call("DELETE", "/v2/acme/direct/manifests/v1", { token: await platform(pullerUid) }), 403, "DENIED");
    assert.equal((await call("DELETE", "/v2/acme/direct/manifests/v1", { token: owner })).status, 202);
  });

  test("unknown routes and methods answer in the registry error format", async () => {
    const t = await pullToken("acme/app");
    assertError(await call("POST", "/v2/acme/app/manifests/v1", { token: t }), 405, "UNSUPPORTED");
    assertError(await call("GET", "/v2/acme/app/whatever", { token: t }), 404, "NAME_UNKNOWN");
    assertError(await call("GET", "/v2/acme/app/tags/list"), 401, "UNAUTHORIZED");
  });
});
