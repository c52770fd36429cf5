import assert from "node:assert/strict";
import { createHash, randomBytes } from "node:crypto";
import { after, before, test } from "node:test";
import { gzipSync } from "node:zlib";
import { MEDIA_TYPE } from "../../src/domains/registry/manifest.js";
import { tarOf, type Blob } from "../support/oci-layout.js";
import { startTestServer, type TestServer } from "../support/test-server.js";

/**
 * sha512 end to end over the wire (OCI image spec "Digests"): blobs uploaded monolithic, chunked
 * and streamed under sha512 digests, a manifest whose config and layers are sha512 pushed by its
 * sha512 digest, tagged, pulled by digest and by tag, mounted into another repo, in Tag History and
 * in the image's report; a missing sha512 blob is 404 BLOB_UNKNOWN, a reference of another
 * algorithm is DIGEST_INVALID (never TAG_INVALID), and a manifest naming a non-distributable layer
 * the registry does not hold is accepted.
 */

let server: TestServer;

const sha512 = (bytes: Buffer) => `sha512:${createHash("sha512").update(bytes).digest("hex")}`;
const blob512 = (bytes: Buffer, mediaType: string): Blob => ({ digest: sha512(bytes), size: bytes.length, bytes, mediaType });

interface Answer {
  status: number;
  headers: Headers;
  text: string;
  json: () => Record<string, unknown>;
}

async function call(method: string, path: string, options: { token?: string; body?: Buffer; headers?: Record<string, string>; base?: string } = {}): Promise<Answer> {
  const headers: Record<string, string> = { ...options.headers };
  if (options.token !== undefined) headers.authorization = `Bearer ${options.token}`;
  const res = await fetch(`${options.base ?? server.registryUrl}${path}`, { method, headers, body: options.body && new Uint8Array(options.body) });
  const text = Buffer.from(await res.arrayBuffer()).toString("latin1");
  return { status: res.status, headers: res.headers, text, json: () => JSON.parse(text) as Record<string, unknown> };
}

function assertError(answer: Answer, status: number, code: string): void {
  assert.equal(answer.status, status, answer.text);
  assert.equal((answer.json().errors as Array<{ code: string }>)[0].code, code, answer.text);
}

async function registryToken(scopes: string[]): Promise<string> {
  const platform = await server.server.tokens.issue({ subject: server.ownerUid, audience: "http://registry.test" });
  const answer = await call("GET", `/token?${scopes.map((s) => `scope=${encodeURIComponent(s)}`).join("&")}`, { headers: { authorization: `Bearer ${platform.token}` } });
  assert.equal(answer.status, 200, answer.text);
  return answer.json().token as string;
}

before(async () => {
  server = await startTestServer();
});
after(() => server.close());

test("an image of sha512 digests is pushed, tagged, pulled by digest and by tag, mounted, and shows in Tag History and its report", async () => {
  const t = await registryToken(["repository:acme/sha512:pull,push", "repository:acme/mounted:pull,push"]);
  const tar = tarOf("etc/motd", Buffer.from("sha512 all the way down\n"));
  const layer = blob512(gzipSync(tar), "application/vnd.oci.image.layer.v1.tar+gzip");
  const config = blob512(
    Buffer.from(JSON.stringify({ architecture: "amd64", os: "linux", config: {}, rootfs: { type: "layers", diff_ids: [sha512(tar)] } })),
    "application/vnd.oci.image.config.v1+json",
  );

  // The config monolithic (POST with the digest), the layer in two chunks, a third blob streamed (PATCH without Content-Range).
  const monolithic = await call("POST", `/v2/acme/sha512/blobs/uploads/?digest=${config.digest}`, { token: t, body: config.bytes, headers: { "content-type": "application/octet-stream" } });
  assert.equal(monolithic.status, 201, monolithic.text);
  assert.equal(monolithic.headers.get("docker-content-digest"), config.digest);
  assert.equal(monolithic.headers.get("location"), `/v2/acme/sha512/blobs/${config.digest}`);

  const started = await call("POST", "/v2/acme/sha512/blobs/uploads/", { token: t });
  assert.equal(started.status, 202);
  let location = started.headers.get("location")!;
  const half = Math.floor(layer.size / 2);
  const first = await call("PATCH", location, {
    token: t,
    body: layer.bytes.subarray(0, half),
    headers: { "content-type": "application/octet-stream", "content-range": `0-${half - 1}` },
  });
  assert.equal(first.status, 202, first.text);
  location = first.headers.get("location")!;
  const closed = await call("PUT", `${location}${location.includes("?") ? "&" : "?"}digest=${layer.digest}`, {
    token: t,
    body: layer.bytes.subarray(half),
    headers: { "content-type": "application/octet-stream", "content-range": `${half}-${layer.size - 1}` },
  });
  assert.equal(closed.status, 201, closed.text);
  assert.equal(closed.headers.get("docker-content-digest"), layer.digest);

  const extra = randomBytes(5000);
  const stream = await call("POST", "/v2/acme/sha512/blobs/uploads/", { token: t });
  const streamed = await call("PATCH", stream.headers.get("location")!, { token: t, body: extra, headers: { "content-type": "application/octet-stream" } });
  assert.equal(streamed.status, 202, streamed.text);
  const streamedLocation = streamed.headers.get("location")!;
  const streamedDone = await call("PUT", `${streamedLocation}${streamedLocation.includes("?") ? "&" : "?"}digest=${sha512(extra)}`, { token: t });
  assert.equal(streamedDone.status, 201, streamedDone.text);

  // A wrong sha512 digest is DIGEST_INVALID; the same bytes under their sha256 are another blob.
  assertError(await call("POST", `/v2/acme/sha512/blobs/uploads/?digest=${sha512(randomBytes(8))}`, { token: t, body: extra }), 400, "DIGEST_INVALID");

  // Pulls of the blobs: whole, HEAD, and by range.
  const got = await call("GET", `/v2/acme/sha512/blobs/${layer.digest}`, { token: t });
  assert.equal(got.status, 200);
  assert.equal(Buffer.from(got.text, "latin1").equals(layer.bytes), true);
  assert.equal(got.headers.get("docker-content-digest"), layer.digest);
  const head = await call("HEAD", `/v2/acme/sha512/blobs/${config.digest}`, { token: t });
  assert.equal(head.status, 200);
  assert.equal(head.headers.get("content-length"), String(config.size));
  const ranged = await call("GET", `/v2/acme/sha512/blobs/${sha512(extra)}`, { token: t, headers: { range: "bytes=10-19" } });
  assert.equal(ranged.status, 206);
  assert.equal(Buffer.from(ranged.text, "latin1").equals(extra.subarray(10, 20)), true);

  // The manifest, by its sha512 digest; then the same manifest tagged (a push by tag names it by sha256).
  const manifest = blob512(
    Buffer.from(JSON.stringify({ schemaVersion: 2, mediaType: MEDIA_TYPE.ociManifest, config: { mediaType: config.mediaType, digest: config.digest, size: config.size }, layers: [{ mediaType: layer.mediaType, digest: layer.digest, size: layer.size }] })),
    MEDIA_TYPE.ociManifest,
  );
  const pushed = await call("PUT", `/v2/acme/sha512/manifests/${manifest.digest}`, { token: t, body: manifest.bytes, headers: { "content-type": manifest.mediaType } });
  assert.equal(pushed.status, 201, pushed.text);
  assert.equal(pushed.headers.get("docker-content-digest"), manifest.digest);
  assert.equal(pushed.headers.get("location"), `/v2/acme/sha512/manifests/${manifest.digest}`);
  const byDigest = await call("GET", `/v2/acme/sha512/manifests/${manifest.digest}`, { token: t, headers: { accept: MEDIA_TYPE.ociManifest } });
  assert.equal(byDigest.status, 200);
  assert.equal(byDigest.text, manifest.bytes.toString("latin1"));
  assert.equal(byDigest.headers.get("docker-content-digest"), manifest.digest);

  // A tag pointing at the sha512 manifest, set over the API; pulled by tag.
  const repo = await call("GET", `/registry/v2/repos?uidp.descendants_of=${server.org.uid}`, { token: server.ownerToken, base: server.apiUrl });
  const repos = (repo.json().repos ?? []) as Array<{ uid: string; name: string }>;
  const repoUid = repos.find((r) => r.name === "sha512")?.uid;
  assert.ok(repoUid, repo.text);
  const tagged = await call("POST", `/registry/v2/tags/${repoUid}`, {
    token: server.ownerToken,
    base: server.apiUrl,
    body: Buffer.from(JSON.stringify({ name: "v1", digest: manifest.digest })),
    headers: { "content-type": "application/json" },
  });
  assert.equal(tagged.status, 200, tagged.text);
  const byTag = await call("GET", "/v2/acme/sha512/manifests/v1", { token: t, headers: { accept: MEDIA_TYPE.ociManifest } });
  assert.equal(byTag.status, 200, byTag.text);
  assert.equal(byTag.text, manifest.bytes.toString("latin1"));
  assert.equal(byTag.headers.get("docker-content-digest"), manifest.digest);
  const tags = await call("GET", "/v2/acme/sha512/tags/list", { token: t });
  assert.deepEqual(tags.json().tags, ["v1"]);

  // Tag History names the sha512 digest.
  const history = await call("GET", "/v2/acme/sha512/_service/history/v1", { token: t });
  assert.equal(history.status, 200, history.text);
  assert.ok(history.text.includes(manifest.digest), history.text);

  // The image's report is made for its sha512 digest.
  await server.server.workers.get("reports")!.drain!();
  const report = await call("GET", `/registry/v2/repos/${repoUid}/digests/${manifest.digest}/vulnerabilityReport`, { token: server.ownerToken, base: server.apiUrl });
  assert.equal(report.status, 200, report.text);
  assert.equal(report.json().status, "STATUS_DONE", report.text);

  // A mount by sha512 digest into another repo of the organization.
  const mounted = await call("POST", `/v2/acme/mounted/blobs/uploads/?mount=${layer.digest}&from=acme/sha512`, { token: t });
  assert.equal(mounted.status, 201, mounted.text);
  assert.equal(mounted.headers.get("docker-content-digest"), layer.digest);
});

test("digests of an algorithm the registry holds are looked up, of another refused as digests: 404 BLOB_UNKNOWN, 404 MANIFEST_UNKNOWN, 400 DIGEST_INVALID", async () => {
  const t = await registryToken(["repository:acme/lookups:pull,push"]);
  const seed = randomBytes(16);
  const seeded = await call("POST", `/v2/acme/lookups/blobs/uploads/?digest=${sha512(seed)}`, { token: t, body: seed, headers: { "content-type": "application/octet-stream" } });
  assert.equal(seeded.status, 201, seeded.text);
  assertError(await call("GET", `/v2/acme/lookups/blobs/${sha512(randomBytes(8))}`, { token: t }), 404, "BLOB_UNKNOWN");
  assert.equal((await call("HEAD", `/v2/acme/lookups/manifests/${sha512(randomBytes(8))}`, { token: t })).status, 404);
  assertError(await call("GET", `/v2/acme/lookups/manifests/${sha512(randomBytes(8))}`, { token: t }), 404, "MANIFEST_UNKNOWN");
  assertError(await call("GET", `/v2/acme/lookups/manifests/md5:${"a".repeat(32)}`, { token: t }), 400, "DIGEST_INVALID");
  assertError(await call("GET", `/v2/acme/lookups/blobs/sha384:${"a".repeat(96)}`, { token: t }), 400, "DIGEST_INVALID");
});

test("a manifest naming non-distributable layers the registry does not hold is accepted, pulled, and its report made of the layers it holds", async () => {
  const t = await registryToken(["repository:acme/foreign:pull,push"]);
  const tar = tarOf("etc/motd", Buffer.from("here\n"));
  const local = blob512(gzipSync(tar), "application/vnd.oci.image.layer.v1.tar+gzip");
  const elsewhere = randomBytes(64);
  const foreign = { mediaType: "application/vnd.oci.image.layer.nondistributable.v1.tar+gzip", digest: sha512(elsewhere), size: 123456, urls: ["https://store.example.com/blob"] };
  const docker = { mediaType: "application/vnd.docker.image.rootfs.foreign.diff.tar.gzip", digest: sha512(randomBytes(64)), size: 654321, urls: ["https://store.example.com/other"] };
  const config = blob512(Buffer.from(JSON.stringify({ architecture: "amd64", os: "windows", rootfs: { type: "layers", diff_ids: [] } })), "application/vnd.oci.image.config.v1+json");
  for (const b of [local, config]) {
    const answer = await call("POST", `/v2/acme/foreign/blobs/uploads/?digest=${b.digest}`, { token: t, body: b.bytes, headers: { "content-type": "application/octet-stream" } });
    assert.equal(answer.status, 201, answer.text);
  }
  const manifest = Buffer.from(JSON.stringify({ schemaVersion: 2, mediaType: MEDIA_TYPE.ociManifest, config: { mediaType: config.mediaType, digest: config.digest, size: config.size }, layers: [foreign, docker, { mediaType: local.mediaType, digest: local.digest, size: local.size }] }));
  const pushed = await call("PUT", "/v2/acme/foreign/manifests/v1", { token: t, body: manifest, headers: { "content-type": MEDIA_TYPE.ociManifest } });
  assert.equal(pushed.status, 201, pushed.text);
  const pulled = await call("GET", "/v2/acme/foreign/manifests/v1", { token: t, headers: { accept: MEDIA_TYPE.ociManifest } });
  assert.equal(pulled.text, manifest.toString("latin1"));
  assertError(await call("GET", `/v2/acme/foreign/blobs/${foreign.digest}`, { token: t }), 404, "BLOB_UNKNOWN");

  // A distributable layer the registry does not hold is still refused.
  const missing = blob512(randomBytes(32), "application/vnd.oci.image.layer.v1.tar+gzip");
  const refused = Buffer.from(JSON.stringify({ schemaVersion: 2, mediaType: MEDIA_TYPE.ociManifest, config: { mediaType: config.mediaType, digest: config.digest, size: config.size }, layers: [{ mediaType: missing.mediaType, digest: missing.digest, size: missing.size }] }));
  assertError(await call("PUT", "/v2/acme/foreign/manifests/v2", { token: t, body: refused, headers: { "content-type": MEDIA_TYPE.ociManifest } }), 400, "MANIFEST_BLOB_UNKNOWN");

  await server.server.workers.get("reports")!.drain!();
  const digest = pushed.headers.get("docker-content-digest")!;
  const repos = (await call("GET", `/registry/v2/repos?uidp.descendants_of=${server.org.uid}`, { token: server.ownerToken, base: server.apiUrl })).json().repos as Array<{ uid: string; name: string }>;
  const repoUid = repos.find((r) => r.name === "foreign")!.uid;
  const report = await call("GET", `/registry/v2/repos/${repoUid}/digests/${digest}/vulnerabilityReport`, { token: server.ownerToken, base: server.apiUrl });
  assert.equal(report.json().status, "STATUS_DONE", report.text);
});
