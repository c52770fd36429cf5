import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { promisify } from "node:util";
import { findRepoByPath } from "../../src/domains/registry/store/repos.js";
import { readTagHistory } from "../../src/domains/registry/store/tag-history.js";
import { writeLayout, type BuiltLayout } from "../support/oci-layout.js";
import { freePort, skopeoSkip } from "../support/skopeo.js";
import { startTestServer, type TestServer } from "../support/test-server.js";

/**
 * A registry client no one here wrote, `skopeo` (Debian package), pushes OCI layouts the
 * test builds into the registry and copies them back, by tag and by digest. `.ci/run`
 * installs it and sets REQUIRE_SKOPEO=1, so that in CI its absence fails instead of skipping.
 */

const run = promisify(execFile);
const skip = skopeoSkip;

const dir = mkdtempSync(join(tmpdir(), "platform-api-skopeo-"));
let server: TestServer;
let host: string;
let creds: string;


async function skopeo(...args: string[]): Promise<string> {
  const { stdout } = await run("skopeo", ["--insecure-policy", ...args], { timeout: 60_000, env: { ...process.env, HOME: dir } });
  return stdout;
}
const push = (source: string, target: string, ...flags: string[]) =>
  skopeo("copy", ...flags, "--dest-tls-verify=false", "--dest-creds", creds, source, `docker://${host}/${target}`);
const pull = (source: string, target: string, ...flags: string[]) =>
  skopeo("copy", ...flags, "--src-tls-verify=false", "--src-creds", creds, `docker://${host}/${source}`, target);

const blobNames = (layout: string) => readdirSync(join(layout, "blobs", "sha256")).sort();
const blob = (layout: string, digest: string) => readFileSync(join(layout, "blobs", "sha256", digest.slice("sha256:".length)));
const topDigest = (layout: string) => (JSON.parse(readFileSync(join(layout, "index.json"), "utf8")) as { manifests: Array<{ digest: string }> }).manifests[0].digest;

describe("skopeo against the registry", { skip }, () => {
  let single: BuiltLayout;
  let multi: BuiltLayout;

  before(async () => {
    const port = await freePort();
    host = `127.0.0.1:${port}`;
    server = await startTestServer({ registryUrl: `http://${host}`, registryPort: port });
    const platform = await server.server.tokens.issue({ subject: server.ownerUid, audience: `http://${host}` });
    creds = `_token:${platform.token}`;
    single = writeLayout(join(dir, "single"), { architectures: ["amd64"], ref: "v1", layerBytes: [40_000, 3000] });
    multi = writeLayout(join(dir, "multi"), { architectures: ["amd64", "arm64"], ref: "multi" });
  });
  after(async () => {
    await server?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  test("push by tag, pull back by tag and by digest: the same bytes", async () => {
    await push(`oci:${single.dir}:v1`, "acme/app:v1");
    await pull("acme/app:v1", `oci:${join(dir, "by-tag")}:v1`);
    await pull(`acme/app@${single.top.digest}`, `oci:${join(dir, "by-digest")}:pinned`);
    for (const out of ["by-tag", "by-digest"]) {
      const layout = join(dir, out);
      assert.equal(topDigest(layout), single.top.digest, out);
      assert.deepEqual(blobNames(layout), blobNames(single.dir), out);
      for (const b of [single.top, single.images[0].config, ...single.images[0].layers]) assert.deepEqual(blob(layout, b.digest), b.bytes, `${out} ${b.digest}`);
    }
    assert.deepEqual(JSON.parse(await skopeo("list-tags", "--tls-verify=false", "--creds", creds, `docker://${host}/acme/app`)).Tags, ["v1"]);
  });

  test("a multi-architecture index: pushed whole, served whole, both architectures through the API", async () => {
    await push(`oci:${multi.dir}:multi`, "acme/app:multi", "--all");
    const raw = await skopeo("inspect", "--raw", "--tls-verify=false", "--creds", creds, `docker://${host}/acme/app:multi`);
    assert.equal(raw, multi.index!.bytes.toString());
    await pull("acme/app:multi", `oci:${join(dir, "multi-out")}:m`, "--all");
    assert.equal(topDigest(join(dir, "multi-out")), multi.index!.digest);
    assert.deepEqual(blobNames(join(dir, "multi-out")), blobNames(multi.dir));

    const repo = await findRepoByPath(server.store.db, "acme", "app");
    assert.ok(repo);
    const auth = { authorization: `Bearer ${server.ownerToken}` };
    const api = (path: string) => fetch(`${server.apiUrl}${path}`, { headers: auth }).then((r) => r.json() as Promise<Record<string, unknown>>);
    assert.deepEqual((await api(`/registry/v2/repos/${repo.uid}/digests/${multi.index!.digest}/architectures`)).architectures, ["amd64", "arm64"]);
    const arm = multi.images.find((i) => i.architecture === "arm64")!;
    assert.equal((await api(`/registry/v2/repos/${repo.uid}/digests/${multi.index!.digest}/size?architecture=arm64`)).size, String(arm.imageSize));
    assert.deepEqual(((await api("/registry/v2/repos?name=app")).repos as Array<{ uid: string }>).map((r) => r.uid), [repo.uid]);
    const tags = (await api(`/registry/v2/tags?uidp.children_of=${repo.uid}&order_by=name`)).tags as Array<{ name: string; digest: string }>;
    assert.deepEqual(tags.map((t) => [t.name, t.digest]), [["multi", multi.index!.digest], ["v1", single.top.digest]]);
  });

  test("each push of a tag is in its history, and the newest digest pins the image", async () => {
    const next = writeLayout(join(dir, "next"), { architectures: ["amd64"], ref: "v1", label: "second" });
    await push(`oci:${next.dir}:v1`, "acme/app:v1");
    const repo = await findRepoByPath(server.store.db, "acme", "app");
    assert.deepEqual((await readTagHistory(server.store.db, repo!.uid, "v1", { limit: 10 })).map((h) => h.digest), [single.top.digest, next.top.digest]);

    const token = (await (await fetch(`${server.registryUrl}/token?scope=repository:acme/app:pull`, { headers: { authorization: `Bearer ${creds.slice("_token:".length)}` } })).json()) as { token: string };
    const history = (await (await fetch(`${server.registryUrl}/v2/acme/app/_service/history/v1`, { headers: { authorization: `Bearer ${token.token}` } })).json()) as {
      history: Array<{ digest: string }>;
    };
    assert.deepEqual(history.history.map((h) => h.digest), [single.top.digest, next.top.digest]);
    const pinned = history.history.at(-1)!.digest;
    await pull(`acme/app@${pinned}`, `oci:${join(dir, "pinned")}:p`);
    assert.deepEqual(blob(join(dir, "pinned"), pinned), next.top.bytes);
    // The older digest still pulls: pinning survives the tag moving on.
    await pull(`acme/app@${single.top.digest}`, `oci:${join(dir, "older")}:o`);
    assert.equal(topDigest(join(dir, "older")), single.top.digest);
  });

  test("push by digest, and a pull the caller may not make", async () => {
    const other = writeLayout(join(dir, "by-digest-push"), { architectures: ["arm64"], ref: "x" });
    await push(`oci:${other.dir}:x`, `acme/pinned@${other.top.digest}`);
    await pull(`acme/pinned@${other.top.digest}`, `oci:${join(dir, "pinned-back")}:p`);
    assert.equal(topDigest(join(dir, "pinned-back")), other.top.digest);
    await assert.rejects(
      skopeo("copy", "--src-tls-verify=false", `docker://${host}/acme/pinned@${other.top.digest}`, `oci:${join(dir, "anonymous")}:a`),
      /unauthorized|authentication required|401/i,
    );
  });
});
