// Registry v1 (`/registry/v1/`) on every wire: the v1 shapes over the same repos and tags v2
// serves, PUT as full replacement, missing as empty, the ambiguous blocked delete, and the
// v1-only operations (end-of-life tags, tag history, vulnerability reports and count reports).
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import type { JsonObject } from "@bufbuild/protobuf";
import { Registry } from "../../gen/platform/registry/v1/registry_pb.js";
import { ImagesService } from "../../gen/platform/registry/v2/images_service_pb.js";
import { ReposService } from "../../gen/platform/registry/v2/repos_service_pb.js";
import { TagsService } from "../../gen/platform/registry/v2/tags_service_pb.js";
import { newChildUid } from "../../src/aip/uidp.js";
import { bootstrapOrganization } from "../../src/server/bootstrap.js";
import { insertGroup } from "../../src/domains/iam/store/groups.js";
import { writeReport } from "../../src/domains/registry/store/image-reports.js";
import { importImages } from "../../src/domains/registry/import.js";
import { writeLayout, type BuiltLayout } from "../support/oci-layout.js";
import { serveOverWires } from "../support/over-wires.js";
import { detailOf, methodOf, reasonOf, type Outcome, violatedFields as violations } from "../support/wires.js";

const dir = mkdtempSync(join(tmpdir(), "platform-api-registry-v1-"));
const digest = (n: number) => `sha256:${n.toString(16).padStart(64, "0")}`;
const q = (params: Record<string, string | number | boolean>) => new URLSearchParams(Object.entries(params).map(([k, v]) => [k, String(v)])).toString();

const served = serveOverWires();
const { server, onEveryWire } = served;
after(() => rmSync(dir, { recursive: true, force: true }));

const items = (out: Outcome) => (out.body?.items as JsonObject[] | undefined) ?? [];
const names = (out: Outcome) => items(out).map((i) => i.name as string).sort();

served.describeOverWires("Registry v1", ({ wire, wireName }) => {
  const v1 = (name: string, request: JsonObject, rest: { method: string; path: string; body?: JsonObject }) =>
    wire().call(methodOf(Registry, name), request, rest, server().ownerToken);
  const v2 = (service: typeof ReposService | typeof TagsService, name: string, request: JsonObject, path: string) =>
    wire().call(methodOf(service, name), request, { method: "GET", path }, server().ownerToken);
  const createRepo = (parentId: string, repo: JsonObject, preventExisting = false) =>
    v1("CreateRepo", { parentId, repo, preventExisting }, { method: "POST", path: `/registry/v1/repos/${parentId}`, body: { ...repo } });
  const createRepoStrict = (parentId: string, repo: JsonObject) =>
    v1("CreateRepo", { parentId, repo, preventExisting: true }, { method: "POST", path: `/registry/v1/repos/${parentId}?prevent_existing=true`, body: repo });
  const putRepo = (repo: JsonObject) => v1("UpdateRepo", repo, { method: "PUT", path: `/registry/v1/repos/${repo.id}`, body: repo });
  const listRepos = (filter: Record<string, string>) =>
    v1("ListRepos", filter.childrenOf ? { uidp: { childrenOf: filter.childrenOf } } : filter, {
      method: "GET",
      path: `/registry/v1/repos?${q(filter.childrenOf ? { "uidp.children_of": filter.childrenOf } : filter)}`,
    });
  const createTag = (repoId: string, tag: JsonObject) => v1("CreateTag", { repoId, tag }, { method: "POST", path: `/registry/v1/tags/${repoId}`, body: tag });
  const listTags = (repoId: string, extra: Record<string, boolean> = {}) => {
    const snake = Object.fromEntries(Object.entries(extra).map(([k, v]) => [k.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`), v]));
    return v1("ListTags", { uidp: { childrenOf: repoId }, ...extra }, { method: "GET", path: `/registry/v1/tags?${q({ "uidp.children_of": repoId, ...snake })}` });
  };
  let folder: string;

  before(async () => {
    folder = newChildUid(server().org.uid);
    await insertGroup(server().store.db, { uid: folder, parent_uid: server().org.uid, name: `registry v1 ${wireName}`, description: "", create_time: 1, update_time: 1 });
  });

  test("CreateRepo and UpdateRepo write what v2 reads; ListRepos by id is v1's Get, with the readme; a missing id is an empty list with 200", async () => {
    const made = await createRepo(folder, { name: `${wireName}/app`, description: "first" });
    assert.equal(made.code, 0, made.message);
    const id = made.body!.id as string;
    assert.match(id, new RegExp(`^${folder}/[0-9a-f]{16}$`));
    assert.match(String(made.body!.createTime), /^\d{4}-\d\d-\d\dT/);
    assert.equal(made.body!.uid, undefined, "v1 names the uid `id`");

    const put = await putRepo({ id, name: `${wireName}/app`, description: "second", readme: "# hello" });
    assert.equal(put.code, 0, put.message);
    assert.equal(put.body!.readme, "# hello");
    const got = await v2(ReposService, "GetRepo", { uid: id }, `/registry/v2/repos/${id}`);
    assert.equal(got.body!.description, "second");
    const readme = await v2(ReposService, "GetRepoReadme", { uid: id }, `/registry/v2/repos/${id}/readme`);
    assert.equal(readme.body!.content, "# hello");

    const one = await listRepos({ id });
    assert.equal(one.code, 0, one.message);
    assert.deepEqual(items(one).map((r) => [r.id, r.name, r.description, r.readme]), [[id, `${wireName}/app`, "second", "# hello"]]);
    assert.deepEqual(Object.keys(one.body!), ["items"], "no next page token, no total");

    const missing = await listRepos({ id: newChildUid(folder) });
    assert.equal(missing.code, 0, missing.message);
    assert.deepEqual(items(missing), []);
    if (wireName === "rest") assert.equal(missing.httpStatus, 200);
    const bad = await listRepos({ id: "not-a-uid" });
    assert.equal(bad.code, 3);
    assert.deepEqual(violations(bad), ["id"]);
  });

  test("UpdateRepo is PUT with full replacement: omitted description and readme are reset, an omitted name is refused", async () => {
    const id = (await createRepo(folder, { name: `${wireName}/put` })).body!.id as string;
    assert.equal((await putRepo({ id, name: `${wireName}/put`, description: "d", readme: "r" })).code, 0);
    const out = await putRepo({ id, name: `${wireName}/renamed` });
    assert.equal(out.code, 0, out.message);
    assert.equal(out.body!.description, undefined);
    assert.equal(out.body!.readme, undefined);
    const got = await v2(ReposService, "GetRepo", { uid: id }, `/registry/v2/repos/${id}`);
    assert.equal(got.body!.name, `${wireName}/renamed`);
    assert.equal(got.body!.description, undefined);
    const noName = await putRepo({ id, description: "x" });
    assert.equal(noName.code, 3);
    assert.deepEqual(violations(noName), ["name"]);
    assert.equal((await v2(ReposService, "GetRepo", { uid: id }, `/registry/v2/repos/${id}`)).body!.name, `${wireName}/renamed`, "nothing was written");
    const gone = await putRepo({ id: newChildUid(folder), name: "x" });
    assert.equal(gone.code, 5, "a write to a missing repo stays NOT_FOUND");
  });

  test("CreateRepo answers the existing repo of that name unless prevent_existing", async () => {
    const first = await createRepo(folder, { name: `${wireName}/again` });
    const second = await createRepo(folder, { name: `${wireName}/again` });
    assert.equal(second.code, 0, second.message);
    assert.equal(second.body!.id, first.body!.id);
    const strict = await createRepoStrict(folder, { name: `${wireName}/again` });
    assert.equal(strict.code, 6);
  });

  test("tags: CreateTag and UpdateTag (PUT resets deprecated, no rename), ListTags exclusions, ListTagHistory", async () => {
    const repo = (await createRepo(folder, { name: `${wireName}/tags` })).body!.id as string;
    const referrer = `sha256-${"a".repeat(64)}.sig`;
    for (const name of ["1.2.3-r1", "latest-20240131", referrer, "stable"]) {
      const out = await createTag(repo, { name, digest: digest(1), deprecated: name === "stable" });
      assert.equal(out.code, 0, out.message);
    }
    assert.deepEqual(names(await listTags(repo)), ["1.2.3-r1", "latest-20240131", referrer, "stable"].sort());
    assert.deepEqual(names(await listTags(repo, { excludeReferrers: true })), ["1.2.3-r1", "latest-20240131", "stable"]);
    assert.deepEqual(names(await listTags(repo, { excludeDates: true })), ["1.2.3-r1", referrer, "stable"].sort());
    assert.deepEqual(names(await listTags(repo, { excludeEpochs: true, excludeReferrers: true })), ["latest-20240131", "stable"]);

    const stable = items(await listTags(repo)).find((t) => t.name === "stable")!;
    assert.equal(stable.deprecated, true);
    assert.ok(stable.lastUpdated, "update_time is last_updated");
    const id = stable.id as string;
    const put = await v1("UpdateTag", { id, name: "stable", digest: digest(2) }, { method: "PUT", path: `/registry/v1/tags/${id}`, body: { name: "stable", digest: digest(2) } });
    assert.equal(put.code, 0, put.message);
    assert.equal(put.body!.deprecated, undefined, "an omitted deprecated is reset");
    const got = await v2(TagsService, "GetTag", { uid: id }, `/registry/v2/tags/${id}`);
    assert.equal(got.body!.digest, digest(2));
    assert.equal(got.body!.deprecated, undefined);
    const rename = await v1("UpdateTag", { id, name: "other", digest: digest(2) }, { method: "PUT", path: `/registry/v1/tags/${id}`, body: { name: "other", digest: digest(2) } });
    assert.equal(rename.code, 3);
    assert.deepEqual(violations(rename), ["name"]);

    const history = await v1("ListTagHistory", { parentId: id }, { method: "GET", path: `/registry/v1/tags/${id}/history` });
    assert.equal(history.code, 0, history.message);
    assert.deepEqual(items(history).map((h) => h.digest), [digest(1), digest(2)]);
    assert.ok(items(history).every((h) => typeof h.updateTimestamp === "string"));
    const summary = await v1("GetRepoTagsSummary", { repoId: repo, excludeReferrers: true }, { method: "GET", path: `/registry/v1/repotagssummary/${repo}?exclude_referrers=true` });
    assert.equal(summary.code, 0, summary.message);
    assert.equal(summary.body!.id, repo);
    assert.equal(summary.body!.tagCount, "3");
    assert.equal((summary.body!.latestTag as JsonObject).name, "stable", "the tag moved last");
    assert.equal(summary.body!.lastUpdated, (summary.body!.latestTag as JsonObject).lastUpdated);
    const unknownRepo = newChildUid(folder);
    const noSummary = await v1("GetRepoTagsSummary", { repoId: unknownRepo }, { method: "GET", path: `/registry/v1/repotagssummary/${unknownRepo}` });
    assert.equal(noSummary.code, 0, noSummary.message);
    assert.equal(noSummary.body!.id, undefined);

    const none = newChildUid(repo);
    const empty = await v1("ListTagHistory", { parentId: none }, { method: "GET", path: `/registry/v1/tags/${none}/history` });
    assert.equal(empty.code, 0, empty.message);
    assert.deepEqual(items(empty), []);
  });

  test("ListEolTags: the deprecated tags, a page at a time, exclusions applied", async () => {
    const repo = (await createRepo(folder, { name: `${wireName}/eol` })).body!.id as string;
    for (const [name, deprecated] of [["old", true], ["older", true], ["oldest-20240101", true], ["current", false]] as const) {
      assert.equal((await createTag(repo, { name, digest: digest(3), deprecated })).code, 0);
    }
    const page = (extra: Record<string, string | number | boolean>) =>
      v1("ListEolTags", { uidp: { childrenOf: repo }, ...extra }, { method: "GET", path: `/registry/v1/eoltags?${q({ "uidp.children_of": repo, ...Object.fromEntries(Object.entries(extra).map(([k, v]) => [k.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`), v])) })}` });
    const first = await page({ pageSize: 2 });
    assert.equal(first.code, 0, first.message);
    assert.equal(items(first).length, 2);
    assert.ok(first.body!.nextPageToken);
    const second = await page({ pageSize: 2, pageToken: first.body!.nextPageToken as string });
    assert.equal(second.code, 0, second.message);
    assert.equal(second.body!.nextPageToken ?? "", "");
    assert.deepEqual([...items(first), ...items(second)].map((t) => t.name).sort(), ["old", "older", "oldest-20240101"]);
    assert.ok([...items(first), ...items(second)].every((t) => t.tagStatus === "TAG_INACTIVE"));
    assert.deepEqual(names(await page({ excludeDates: true })), ["old", "older"]);
    const negative = await page({ pageSize: -1 });
    assert.equal(negative.code, 3);
  });

  test("a blocked DeleteRepo fails as v1 did: FAILED_PRECONDITION without a PreconditionFailure; DeleteTag then DeleteRepo", async () => {
    const repo = (await createRepo(folder, { name: `${wireName}/gone` })).body!.id as string;
    const tag = (await createTag(repo, { name: "v1", digest: digest(4) })).body!.id as string;
    const blocked = await v1("DeleteRepo", { id: repo }, { method: "DELETE", path: `/registry/v1/repos/${repo}` });
    assert.equal(blocked.code, 9);
    assert.equal(detailOf(blocked, "PreconditionFailure"), undefined);
    assert.ok(reasonOf(blocked));
    assert.doesNotMatch(blocked.message ?? "", /tag|child/i, "the cause is not given");
    assert.equal((await v1("DeleteTag", { id: tag }, { method: "DELETE", path: `/registry/v1/tags/${tag}` })).code, 0);
    const deleted = await v1("DeleteRepo", { id: repo }, { method: "DELETE", path: `/registry/v1/repos/${repo}` });
    assert.equal(deleted.code, 0, deleted.message);
    assert.deepEqual(items(await listRepos({ id: repo })), []);
    assert.equal((await v2(ReposService, "GetRepo", { uid: repo }, `/registry/v2/repos/${repo}`)).code, 5);
  });
});

describe("Registry v1 images and vulnerability reports", () => {
  let layout: BuiltLayout;
  let repoUid: string;

  const v1 = (name: string, request: JsonObject, path: string) =>
    onEveryWire((wire) => wire.call(methodOf(Registry, name), request, { method: "GET", path }, server().ownerToken));
  const v2Report = (digestOf: string) =>
    onEveryWire((wire) =>
      wire.call(
        methodOf(ImagesService, "GetVulnerabilityReport"),
        { repoUid, digest: digestOf },
        { method: "GET", path: `/registry/v2/repos/${repoUid}/digests/${digestOf}/vulnerabilityReport` },
        server().ownerToken,
      ),
    );

  before(async () => {
    layout = writeLayout(join(dir, "multi"), { architectures: ["amd64", "arm64"], ref: "v1", layerBytes: [1000, 200] });
    repoUid = (await importImages(server().store, { repository: "acme/v1/images", paths: [layout.dir], now: Date.now(), content: server().content })).repo.uid;
    // Wait for the worker's own reports (asking every wire while they change would compare two states), then write one with findings for the amd64 image.
    await server().server.workers.get("reports")!.drain!();
    assert.equal((await v2Report(layout.top.digest)).body?.status, "STATUS_DONE", "the worker reports the imported images");
    const amd64 = layout.images[0].manifest.digest;
    const now = Date.now();
    const finding = (advisoryId: string, severity: "CRITICAL" | "LOW") => ({
      advisoryId,
      aliases: [`CVE-${advisoryId}`],
      purl: `pkg:cargo/${advisoryId.toLowerCase()}@1.0.0`,
      ecosystem: "crates.io",
      packageName: advisoryId.toLowerCase(),
      installedVersion: "1.0.0",
      fixedVersion: "1.0.1",
      severity,
      score: severity === "CRITICAL" ? 9.8 : undefined,
      severities: [],
    });
    await writeReport(
      server().store.db,
      { digest: amd64, status: "done", reason: "", distro: "", packages: 2, package_source: "layers", critical: 1, high: 0, medium: 0, low: 1, unknown: 0, create_time: now, update_time: now },
      [finding("A-1", "CRITICAL"), finding("B-2", "LOW")],
    );
  });

  test("GetArchs and GetSize are the v2 image facts in v1 shapes; a digest the repo lacks is empty with 200", async () => {
    const archs = await v1("GetArchs", { repoId: repoUid, digest: layout.top.digest }, `/registry/v1/repos/${repoUid}/digests/${layout.top.digest}/architectures`);
    assert.deepEqual(archs.body!.archs, ["amd64", "arm64"]);
    const size = await v1("GetSize", { repoId: repoUid, digest: layout.top.digest, arch: "arm64" }, `/registry/v1/repos/${repoUid}/digests/${layout.top.digest}/size?arch=arm64`);
    assert.equal(size.body!.arch, "arm64");
    assert.equal(Number(size.body!.size), layout.images[1].layers.reduce((n, l) => n + l.size, 0) + layout.images[1].config.size);
    const badArch = await v1("GetSize", { repoId: repoUid, digest: layout.top.digest, arch: "Not An Arch" }, `/registry/v1/repos/${repoUid}/digests/${layout.top.digest}/size?arch=Not%20An%20Arch`);
    assert.equal(badArch.code, 3);
    assert.deepEqual(violations(badArch), ["arch"], "INVALID_ARGUMENT names the v1 field");
    const none = await v1("GetArchs", { repoId: repoUid, digest: digest(9) }, `/registry/v1/repos/${repoUid}/digests/${digest(9)}/architectures`);
    assert.equal(none.code, 0, none.message);
    assert.deepEqual(none.body, {});
  });

  test("GetVulnReport is the image report in v1 shapes, for an image and an index; a missing image is an empty report", async () => {
    const amd64 = layout.images[0].manifest.digest;
    const image = await v1("GetVulnReport", { repoId: repoUid, digest: amd64 }, `/registry/v1/repos/${repoUid}/digests/${amd64}/vulnreport`);
    assert.equal(image.code, 0, image.message);
    assert.equal(image.body!.status, "VULN_REPORT_STATUS_DONE");
    assert.deepEqual(image.body!.counts, { critical: 1, low: 1, total: 2 });
    assert.deepEqual((image.body!.vulns as JsonObject[]).map((v) => [v.id, v.severity]), [["A-1", "CRITICAL"], ["B-2", "LOW"]]);
    const v2 = await v2Report(amd64);
    assert.deepEqual(v2.body!.counts, { critical: 1, low: 1 });

    const index = await v1("GetVulnReport", { repoId: repoUid, digest: layout.top.digest }, `/registry/v1/repos/${repoUid}/digests/${layout.top.digest}/vulnreport`);
    assert.deepEqual(index.body!.counts, { critical: 1, low: 1, total: 2 });
    assert.deepEqual((index.body!.platforms as JsonObject[]).map((p) => p.arch), ["amd64", "arm64"]);

    const missing = await v1("GetVulnReport", { repoId: repoUid, digest: digest(9) }, `/registry/v1/repos/${repoUid}/digests/${digest(9)}/vulnreport`);
    assert.equal(missing.code, 0, missing.message);
    assert.deepEqual(missing.body, {});
    const bad = await v1("GetVulnReport", { repoId: repoUid, digest: "sha256:nope" }, `/registry/v1/repos/${repoUid}/digests/sha256:nope/vulnreport`);
    assert.equal(bad.code, 3);
  });

  test("the same authorization and hierarchy as v2: another organization sees none of it", async () => {
    const other = await bootstrapOrganization(server().store, `other-${Date.now()}`, Date.now());
    const token = (await server().server.tokens.issue({ subject: other.identity.uid, audience: "http://api.test" })).token;
    const as = (name: string, request: JsonObject, path: string) =>
      onEveryWire((wire) => wire.call(methodOf(Registry, name), request, { method: "GET", path }, token));
    const none = async (out: Promise<Outcome>) => {
      const o = await out;
      assert.equal(o.code, 0, o.message);
      assert.deepEqual(items(o), []);
    };
    await none(as("ListRepos", { id: repoUid }, `/registry/v1/repos?id=${repoUid}`));
    await none(as("ListTags", { uidp: { childrenOf: repoUid } }, `/registry/v1/tags?uidp.children_of=${repoUid}`));
    await none(as("ListVulnCountReports", {}, "/registry/v1/vuln_reports/counts"));
    await none(as("ListEolTags", {}, "/registry/v1/eoltags"));
    const report = await as("GetVulnReport", { repoId: repoUid, digest: layout.top.digest }, `/registry/v1/repos/${repoUid}/digests/${layout.top.digest}/vulnreport`);
    assert.equal(report.code, 7);
    const unauthenticated = await served.wire("grpc").call(methodOf(Registry, "ListRepos"), {}, { method: "GET", path: "/registry/v1/repos" });
    assert.equal(unauthenticated.code, 16);
  });

  test("ListVulnCountReports: the counts of every tagged image in scope, without paging", async () => {
    const out = await v1("ListVulnCountReports", { uidp: { childrenOf: repoUid } }, `/registry/v1/vuln_reports/counts?uidp.children_of=${repoUid}`);
    assert.equal(out.code, 0, out.message);
    assert.deepEqual(
      items(out).map((r) => [r.tag, r.repoId, r.digest, r.status, r.counts]),
      [["v1", repoUid, layout.top.digest, "VULN_REPORT_STATUS_DONE", { critical: 1, low: 1, total: 2 }]],
    );
    const other = newChildUid(repoUid);
    const elsewhere = await v1("ListVulnCountReports", { uidp: { childrenOf: other } }, `/registry/v1/vuln_reports/counts?uidp.children_of=${other}`);
    assert.equal(elsewhere.code, 0);
    assert.deepEqual(items(elsewhere), []);
  });
});
