import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, test } from "node:test";
import { promisify } from "node:util";
import { ImagesService } from "../../gen/platform/registry/v2/images_service_pb.js";
import { NotFoundError } from "../../src/store/errors.js";
import { newChildUid } from "../../src/aip/uidp.js";
import { bootstrapOrganization } from "../../src/server/bootstrap.js";
import { importImages } from "../../src/domains/registry/import.js";
import { linkedBlobSize } from "../../src/domains/registry/store/blobs.js";
import { findManifest } from "../../src/domains/registry/store/manifests.js";
import { findRepoByPath } from "../../src/domains/registry/store/repos.js";
import { readTagHistory } from "../../src/domains/registry/store/tag-history.js";
import { openStore } from "../../src/server/open-store.js";
import { writeLayout, type BuiltLayout } from "../support/oci-layout.js";
import { serveOverWires } from "../support/over-wires.js";
import type { TestServer } from "../support/test-server.js";
import { detailOf, methodOf, reasonOf } from "../support/wires.js";
import { BIN } from "../support/repo.js";

const dir = mkdtempSync(join(tmpdir(), "platform-api-images-"));
let multi: BuiltLayout;
let single: BuiltLayout;
let repoUid: string;

/** Imports a two-platform layout and a one-platform layout into acme/tools/app. */
async function importLayouts(server: TestServer): Promise<void> {
  multi = writeLayout(join(dir, "multi"), { architectures: ["amd64", "arm64"], ref: "v1", layerBytes: [2000, 300] });
  single = writeLayout(join(dir, "single"), { architectures: ["arm64"], ref: "arm-only" });
  const result = await importImages(server.store, { repository: "acme/tools/app", paths: [multi.dir, single.dir], now: Date.now(), content: server.content });
  repoUid = result.repo.uid;
}

const served = serveOverWires({ prepare: importLayouts });
const { server } = served;
after(() => rmSync(dir, { recursive: true, force: true }));

test("import: creates the repo, stores every manifest, points the layout's ref names, records history", async () => {
  const repo = await findRepoByPath(server().store.db, "acme", "tools/app");
  assert.equal(repo?.uid, repoUid);
  assert.equal(repo?.group_uid, server().org.uid);
  for (const digest of [multi.top.digest, ...multi.images.map((i) => i.manifest.digest), single.top.digest]) {
    assert.ok(await findManifest(server().store.db, repoUid, digest), digest);
  }
  assert.deepEqual((await readTagHistory(server().store.db, repoUid, "v1", { limit: 10 })).map((h) => h.digest), [multi.top.digest]);
  assert.deepEqual((await readTagHistory(server().store.db, repoUid, "arm-only", { limit: 10 })).map((h) => h.digest), [single.top.digest]);
  // The layouts' blobs were copied: an imported image pulls.
  for (const layer of multi.images[1].layers) {
    assert.equal(await linkedBlobSize(server().store.db, repoUid, layer.digest), layer.size);
    assert.equal(await server().content.size(layer.digest), layer.size);
  }

  // Importing again changes nothing; --tag moves a tag and adds a history record.
  const again = await importImages(server().store, { repository: "acme/tools/app", paths: [single.dir], tag: "v1", now: Date.now() });
  assert.equal(again.repo.created, false);
  assert.deepEqual(again.manifests.map((m) => m.written), [false]);
  assert.deepEqual((await readTagHistory(server().store.db, repoUid, "v1", { limit: 10 })).map((h) => h.digest), [multi.top.digest, single.top.digest]);
  await importImages(server().store, { repository: "acme/tools/app", paths: [multi.dir], now: Date.now() });
});

test("import: bad input stores nothing", async () => {
  const lonelyIndex = join(dir, "index-only.json");
  writeFileSync(lonelyIndex, multi.index!.bytes);
  const cases: Array<[string, Parameters<typeof importImages>[1]]> = [
    ["an index whose images are absent", { repository: "acme/other", paths: [lonelyIndex], now: 1 }],
    ["no such path", { repository: "acme/other", paths: [join(dir, "nope")], now: 1 }],
    ["--tag with several top-level manifests", { repository: "acme/other", paths: [multi.dir, single.dir], tag: "x", now: 1 }],
    ["a bad tag", { repository: "acme/other", paths: [single.dir], tag: "-x", now: 1 }],
    ["a bad repository name", { repository: "acme/Bad Name", paths: [single.dir], now: 1 }],
    ["a --group outside the organization", { repository: "acme/other", paths: [single.dir], group: newChildUid("f".repeat(40)), now: 1 }],
  ];
  for (const [name, options] of cases) {
    await assert.rejects(importImages(server().store, options), (e: { kind?: string }) => e.kind === "INVALID_ARGUMENT", name);
  }
  await assert.rejects(importImages(server().store, { repository: "nobody/app", paths: [single.dir], now: 1 }), (e: { kind?: string }) => e.kind === "NOT_FOUND");
  await assert.rejects(importImages(server().store, { repository: "acme/other", paths: [single.dir], group: newChildUid(server().org.uid), now: 1 }), (e) => e instanceof NotFoundError && e.type === "group", "no such group");
  assert.equal(await findRepoByPath(server().store.db, "acme", "other"), undefined, "the failed imports created no repo");
});

served.describeOverWires("ImagesService", ({ wire, wireName }) => {
  const architectures = (repo: string, digest: string, token = server().ownerToken) =>
    wire().call(
      methodOf(ImagesService, "GetImageArchitectures"),
      { repoUid: repo, digest },
      { method: "GET", path: `/registry/v2/repos/${repo}/digests/${digest}/architectures` },
      token,
    );
  const size = (repo: string, digest: string, architecture?: string) =>
    wire().call(
      methodOf(ImagesService, "GetImageSize"),
      { repoUid: repo, digest, ...(architecture === undefined ? {} : { architecture }) },
      { method: "GET", path: `/registry/v2/repos/${repo}/digests/${digest}/size${architecture === undefined ? "" : `?architecture=${architecture}`}` },
      server().ownerToken,
    );

  test("architectures of an index and of a single image", async () => {
    const index = await architectures(repoUid, multi.top.digest);
    assert.equal(index.code, 0, index.message);
    assert.deepEqual(index.body?.architectures, ["amd64", "arm64"]);
    assert.deepEqual((await architectures(repoUid, single.top.digest)).body?.architectures, ["arm64"]);
  });

  test("size: layers plus config of the architecture's image; amd64 by default", async () => {
    const amd = multi.images.find((i) => i.architecture === "amd64")!;
    const arm = multi.images.find((i) => i.architecture === "arm64")!;
    const byDefault = await size(repoUid, multi.top.digest);
    assert.equal(byDefault.code, 0, byDefault.message);
    assert.deepEqual(byDefault.body, { size: String(amd.imageSize), architecture: "amd64", digest: amd.manifest.digest });
    assert.equal((await size(repoUid, multi.top.digest, "arm64")).body?.size, String(arm.imageSize));
    assert.equal((await size(repoUid, single.top.digest)).body?.size, String(single.images[0].imageSize));
    assert.equal((await size(repoUid, multi.top.digest, "s390x")).code, 5);
    assert.equal((await size(repoUid, single.top.digest, "amd64")).code, 5, "a single arm64 image has no amd64 size");
  });

  test("unknown digest or repo is NOT_FOUND; bad input is INVALID_ARGUMENT; a stranger is denied", async () => {
    const unknown = `sha256:${"0".repeat(64)}`;
    const missing = await architectures(repoUid, unknown);
    assert.equal(missing.code, 5);
    assert.equal(detailOf(missing, "ResourceInfo")?.resourceType, "image");
    if (wireName === "rest") assert.equal(missing.httpStatus, 404);
    assert.equal((await architectures(newChildUid(server().org.uid), multi.top.digest)).code, 5);
    const bad = await architectures(repoUid, "sha256:ABC");
    assert.equal(bad.code, 3);
    assert.equal(reasonOf(bad), "INVALID_ARGUMENT");
    assert.deepEqual((detailOf(bad, "BadRequest")?.fieldViolations as Array<{ field: string }>).map((v) => v.field), ["digest"]);
    assert.equal((await size(repoUid, multi.top.digest, "AMD64!")).code, 3);
    const { identity: outsider } = await bootstrapOrganization(server().store, `stranger-${wireName}`, Date.now());
    const stranger = await server().server.tokens.issue({ subject: outsider.uid, audience: "http://api.test" });
    assert.equal((await architectures(repoUid, multi.top.digest, stranger.token)).code, 7);
  });
});

test("platform-api registry import: a layout into a repo of a file database, output as JSON", async () => {
  const db = join(dir, "cli.db");
  const store = await openStore(db);
  await bootstrapOrganization(store, "cli-org", Date.now());
  await store.close();
  const run = (...args: string[]) => promisify(execFile)(process.execPath, [BIN, ...args], { encoding: "utf8", env: { ...process.env, DATABASE_URL: "" } });
  assert.match((await run("registry", "import", "--help")).stdout, /Usage: platform-api registry import/);
  const out = JSON.parse((await run("registry", "import", "--db", db, "--registry-dir", join(dir, "cli-registry"), "--repo", "cli-org/app", multi.dir)).stdout) as {
    repo: { created: boolean };
    manifests: unknown[];
    blobs: number;
    tags: Array<{ name: string; digest: string }>;
  };
  assert.equal(out.repo.created, true);
  assert.equal(out.manifests.length, 3);
  assert.equal(out.blobs, 6, "two images of a config and two layers each");
  assert.deepEqual(out.tags, [{ name: "v1", digest: multi.top.digest }]);
  await assert.rejects(run("registry", "import", "--db", db, "--repo", "cli-org/app"), (e: { code: number; stderr: string }) => e.code === 2 && /at least one/.test(e.stderr));
  await assert.rejects(run("registry", "import", "--db", db, "--repo", "cli-org/app", join(dir, "nope")), (e: { code: number; stderr: string }) => e.code === 2 && /no such file/.test(e.stderr));
});
