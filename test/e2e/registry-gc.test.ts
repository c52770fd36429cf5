import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import { existsSync, mkdtempSync, rmSync, utimesSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { promisify } from "node:util";
import { bootstrapOrganization } from "../../src/server/bootstrap.js";
import { createFileContentStore } from "../../src/domains/registry/content/content-store.js";
import { collectGarbage, DEFAULT_GC_GRACE_MS, UPLOAD_LIFETIME_MS } from "../../src/domains/registry/gc.js";
import { linkBlob, recordBlob } from "../../src/domains/registry/store/blobs.js";
import { findRepoByPath } from "../../src/domains/registry/store/repos.js";
import { openStore } from "../../src/server/open-store.js";
import { buildImage, writeLayout, type BuiltImage } from "../support/oci-layout.js";
import { startTestServer, type TestServer } from "../support/test-server.js";
import { BIN } from "../support/repo.js";

/** `platform-api registry gc`: abandoned uploads expire, blobs no manifest names go, pushes in progress are safe. */

const DAY = 24 * 3600 * 1000;
let server: TestServer;
const sha = (bytes: Buffer) => `sha256:${createHash("sha256").update(bytes).digest("hex")}`;

async function call(method: string, path: string, token: string, body?: Buffer, headers: Record<string, string> = {}) {
  const res = await fetch(`${server.registryUrl}${path}`, { method, headers: { authorization: `Bearer ${token}`, ...headers }, body: body && new Uint8Array(body) });
  return { status: res.status, headers: res.headers, bytes: Buffer.from(await res.arrayBuffer()) };
}

/** A platform token of the owner for the registry audience: it pushes and pulls directly. */
const ownerToken = async () => (await server.server.tokens.issue({ subject: server.ownerUid, audience: "http://registry.test" })).token;

async function pushBlob(name: string, bytes: Buffer, token: string): Promise<void> {
  assert.equal((await call("POST", `/v2/${name}/blobs/uploads/?digest=${sha(bytes)}`, token, bytes)).status, 201);
}

async function pushImage(name: string, tag: string, image: BuiltImage, token: string): Promise<void> {
  for (const blob of [image.config, ...image.layers]) await pushBlob(name, blob.bytes, token);
  const put = await call("PUT", `/v2/${name}/manifests/${tag}`, token, image.manifest.bytes, { "content-type": image.manifest.mediaType });
  assert.equal(put.status, 201, put.bytes.toString());
}

/** Makes every recorded blob look last used `age` ago. */
async function ageBlobs(age: number, digests?: string[]): Promise<void> {
  let query = server.store.db.updateTable("blobs").set({ use_time: Date.now() - age });
  if (digests !== undefined) query = query.where("digest", "in", digests);
  await query.execute();
}

const blobFile = (root: string, digest: string) => join(root, "blobs", "sha256", digest.slice(7, 9), digest.slice(7));

before(async () => {
  server = await startTestServer();
});
after(() => server.close());

describe("registry gc", () => {
  test("removes an old unreferenced blob with its file, keeps referenced and recent ones; pulls still work", async () => {
    const token = await ownerToken();
    const image = buildImage({ architecture: "amd64", label: "kept" });
    await pushImage("acme/gc", "v1", image, token);
    const orphan = randomBytes(300);
    await pushBlob("acme/gc", orphan, token);
    // Also mounted into another repo: its links go with it.
    assert.equal((await call("POST", `/v2/acme/gc-mount/blobs/uploads/?mount=${sha(orphan)}&from=acme/gc`, token)).status, 201);
    await ageBlobs(2 * DAY);
    const fresh = randomBytes(200);
    await pushBlob("acme/gc", fresh, token); // a push in progress: uploaded, no manifest yet

    const result = await collectGarbage(server.store.db, server.content, { now: Date.now() });
    assert.deepEqual(result, { uploads: 0, blobs: 1, bytes: 300, recent: 1 });
    assert.equal(existsSync(blobFile(server.contentDir, sha(orphan))), false, "the file is removed");
    assert.equal((await server.store.db.selectFrom("repo_blobs").select("repo_uid").where("digest", "=", sha(orphan)).execute()).length, 0);
    for (const repo of ["acme/gc", "acme/gc-mount"]) assert.equal((await call("HEAD", `/v2/${repo}/blobs/${sha(orphan)}`, token)).status, 404);

    // The image still pulls whole, by tag; the recent blob is still there and its push finishes.
    const manifest = await call("GET", "/v2/acme/gc/manifests/v1", token);
    assert.deepEqual(manifest.bytes, image.manifest.bytes);
    for (const blob of [image.config, ...image.layers]) assert.deepEqual((await call("GET", `/v2/acme/gc/blobs/${blob.digest}`, token)).bytes, blob.bytes);
    assert.deepEqual((await call("GET", `/v2/acme/gc/blobs/${sha(fresh)}`, token)).bytes, fresh);

    // The collected digest can be pushed again.
    await pushBlob("acme/gc", orphan, token);
    assert.deepEqual((await call("GET", `/v2/acme/gc/blobs/${sha(orphan)}`, token)).bytes, orphan);
  });

  test("a blob stays while a push uses it: a mount or a manifest naming it marks it used", async () => {
    const token = await ownerToken();
    const image = buildImage({ architecture: "arm64", label: "later" });
    for (const blob of [image.config, ...image.layers]) await pushBlob("acme/slow", blob.bytes, token);
    await ageBlobs(2 * DAY, [image.config.digest, ...image.layers.map((l) => l.digest)]);
    // A client that finds the blobs there (HEAD) and only PUTs the manifest: the PUT marks them used...
    for (const blob of [image.config, ...image.layers]) assert.equal((await call("HEAD", `/v2/acme/slow/blobs/${blob.digest}`, token)).status, 200);
    assert.equal((await call("PUT", "/v2/acme/slow/manifests/v1", token, image.manifest.bytes, { "content-type": image.manifest.mediaType })).status, 201);
    // ...so even a collection that had read the manifests before this PUT would spare them.
    const spared = await server.store.db.selectFrom("blobs").select("use_time").where("digest", "=", image.layers[0].digest).executeTakeFirstOrThrow();
    assert.ok(Number(spared.use_time) > Date.now() - 60_000);

    // A mount of an old unreferenced blob marks it used too.
    const layer = randomBytes(100);
    await pushBlob("acme/slow", layer, token);
    await ageBlobs(2 * DAY, [sha(layer)]);
    assert.equal((await call("POST", `/v2/acme/slow2/blobs/uploads/?mount=${sha(layer)}&from=acme/slow`, token)).status, 201);
    const result = await collectGarbage(server.store.db, server.content, { now: Date.now() });
    assert.equal(result.blobs, 0);
    assert.equal((await call("GET", `/v2/acme/slow2/blobs/${sha(layer)}`, token)).status, 200);
    // Past its grace, with nothing naming it, it goes.
    assert.ok((await collectGarbage(server.store.db, server.content, { now: Date.now() + DEFAULT_GC_GRACE_MS + 60_000 })).blobs >= 1);
    assert.equal((await call("HEAD", `/v2/acme/slow2/blobs/${sha(layer)}`, token)).status, 404);
    assert.equal((await call("GET", "/v2/acme/slow/manifests/v1", token)).status, 200);
    for (const blob of [image.config, ...image.layers]) assert.equal((await call("HEAD", `/v2/acme/slow/blobs/${blob.digest}`, token)).status, 200);
  });

  test("abandoned uploads expire after a day: row and file", async () => {
    const token = await ownerToken();
    const started = await call("POST", "/v2/acme/gc/blobs/uploads/", token);
    const location = started.headers.get("location")!;
    assert.equal((await call("PATCH", location, token, randomBytes(10))).status, 202);
    const id = location.slice(location.lastIndexOf("/") + 1);
    const recent = await call("POST", "/v2/acme/gc/blobs/uploads/", token);

    // Not yet a day old: kept.
    assert.equal((await collectGarbage(server.store.db, server.content, { now: Date.now() })).uploads, 0);
    const old = Date.now() - UPLOAD_LIFETIME_MS - 60_000;
    await server.store.db.updateTable("uploads").set({ create_time: old }).where("id", "=", id).execute();
    utimesSync(join(server.contentDir, "uploads", id), old / 1000, old / 1000);
    assert.equal((await collectGarbage(server.store.db, server.content, { now: Date.now() })).uploads, 1);
    assert.equal((await call("GET", location, token)).status, 404);
    assert.equal(existsSync(join(server.contentDir, "uploads", id)), false);
    assert.equal((await call("GET", recent.headers.get("location")!, token)).status, 204);
  });
});

test("platform-api registry gc on a file database: prints what it removed", async () => {
  const dir = mkdtempSync(join(tmpdir(), "platform-api-gc-"));
  try {
    const db = join(dir, "gc.db");
    const registryDir = join(dir, "registry");
    const run = (...args: string[]) => promisify(execFile)(process.execPath, [BIN, ...args], { encoding: "utf8", env: { ...process.env, DATABASE_URL: "", REGISTRY_DIR: "" } });
    assert.match((await run("--help")).stdout, /registry gc/);
    assert.match((await run("registry", "gc", "--help")).stdout, /Usage: platform-api registry gc/);

    const store = await openStore(db);
    await bootstrapOrganization(store, "gc-org", Date.now());
    await store.close();
    const layout = writeLayout(join(dir, "layout"), { architectures: ["amd64"], ref: "v1" });
    await run("registry", "import", "--db", db, "--registry-dir", registryDir, "--repo", "gc-org/app", layout.dir);
    // An orphan blob, last used two days ago.
    const again = await openStore(db);
    const content = createFileContentStore(registryDir);
    const orphan = randomBytes(123);
    const digest = await content.put(orphan);
    await recordBlob(again.db, digest, orphan.length, Date.now() - 2 * DAY);
    await linkBlob(again.db, (await findRepoByPath(again.db, "gc-org", "app"))!.uid, digest);
    await again.close();

    const out = JSON.parse((await run("registry", "gc", "--db", db, "--registry-dir", registryDir)).stdout) as Record<string, number>;
    assert.deepEqual(out, { uploads: 0, blobs: 1, bytes: 123, recent: 0 });
    assert.equal(await content.size(digest), undefined);
    for (const blob of [layout.images[0].config, ...layout.images[0].layers]) assert.equal(await content.size(blob.digest), blob.size, "referenced blobs stay");
    await assert.rejects(run("registry", "gc", "--db", db, "--grace", "soon"), (e: { code: number; stderr: string }) => e.code === 2 && /--grace/.test(e.stderr));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
