import assert from "node:assert/strict";
import { before, test } from "node:test";
import type { JsonObject } from "@bufbuild/protobuf";
import { ReposService } from "../../gen/platform/registry/v2/repos_service_pb.js";
import { TagsService } from "../../gen/platform/registry/v2/tags_service_pb.js";
import { newChildUid } from "../../src/aip/uidp.js";
import { insertGroup } from "../../src/domains/iam/store/groups.js";
import { describeOverWires } from "../support/over-wires.js";
import { detailOf, methodOf, reasonOf, violatedFields as violations } from "../support/wires.js";

const digest = (n: number) => `sha256:${n.toString(16).padStart(64, "0")}`;

describeOverWires("Registry API", {}, ({ server, wire, wireName }) => {
  const repos = (name: string, request: JsonObject, rest: { method: string; path: string; body?: JsonObject }) =>
    wire().call(methodOf(ReposService, name), request, rest, server().ownerToken);
  const tags = (name: string, request: JsonObject, rest: { method: string; path: string; body?: JsonObject }) =>
    wire().call(methodOf(TagsService, name), request, rest, server().ownerToken);
  let folder: string;
  const createRepo = (parent: string, repo: JsonObject) => repos("CreateRepo", { parent, repo }, { method: "POST", path: `/registry/v2/repos/${parent}`, body: repo });
  const createTag = (parent: string, tag: JsonObject) => tags("CreateTag", { parent, tag }, { method: "POST", path: `/registry/v2/tags/${parent}`, body: tag });

  before(async () => {
    folder = newChildUid(server().org.uid);
    await insertGroup(server().store.db, { uid: folder, parent_uid: server().org.uid, name: `registry ${wireName}`, description: "", create_time: 1, update_time: 1 });
  });

  test("CreateRepo, GetRepo, and a missing repo is NOT_FOUND", async () => {
    const made = await createRepo(folder, { name: `${wireName}/app`, description: "first" });
    assert.equal(made.code, 0, made.message);
    assert.match(String(made.body?.uid), new RegExp(`^${folder}/[0-9a-f]{16}$`));
    const read = await repos("GetRepo", { uid: made.body!.uid as string }, { method: "GET", path: `/registry/v2/repos/${made.body!.uid}` });
    assert.equal(read.body?.name, `${wireName}/app`);
    assert.match(String(read.body?.createTime), /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/);
    const uid = newChildUid(folder);
    const missing = await repos("GetRepo", { uid }, { method: "GET", path: `/registry/v2/repos/${uid}` });
    assert.equal(missing.code, 5);
    assert.equal(detailOf(missing, "ResourceInfo")?.resourceType, "repo");
    if (wireName === "rest") assert.equal(missing.httpStatus, 404);
    const dup = await createRepo(folder, { name: `${wireName}/app` });
    assert.equal(dup.code, 6);
  });

  test("UpdateRepo: no mask changes the fields given; a mask only its fields; * replaces all", async () => {
    const made = await createRepo(folder, { name: `${wireName}/patch`, description: "before" });
    const uid = made.body!.uid as string;
    const patch = (repo: JsonObject, mask?: string) =>
      repos("UpdateRepo", mask === undefined ? { repo: { uid, ...repo } } : { repo: { uid, ...repo }, updateMask: mask }, {
        method: "PATCH",
        path: `/registry/v2/repos/${uid}${mask === undefined ? "" : `?updateMask=${encodeURIComponent(mask)}`}`,
        body: repo,
      });
    let out = await patch({ description: "after" });
    assert.equal(out.code, 0, out.message);
    assert.equal(out.body?.name, `${wireName}/patch`);
    assert.equal(out.body?.description, "after");
    out = await patch({ name: "ignored", description: "masked" }, "description");
    assert.equal(out.body?.name, `${wireName}/patch`, "a name outside the mask is ignored");
    assert.equal(out.body?.description, "masked");
    out = await patch({ name: `${wireName}/renamed` }, "*");
    assert.equal(out.body?.name, `${wireName}/renamed`);
    assert.equal(out.body?.description, undefined, "* resets the omitted description");
  });

  test("readme: PATCH then GET {uid, content}", async () => {
    const made = await createRepo(folder, { name: `${wireName}/readme` });
    const uid = made.body!.uid as string;
    const put = await repos("UpdateRepoReadme", { repoReadme: { uid, content: "# Title" } }, { method: "PATCH", path: `/registry/v2/repos/${uid}/readme`, body: { content: "# Title" } });
    assert.equal(put.code, 0, put.message);
    const got = await repos("GetRepoReadme", { uid }, { method: "GET", path: `/registry/v2/repos/${uid}/readme` });
    assert.deepEqual(got.body, { uid, content: "# Title" });
    // The request field is `repo_readme` (the hosted name), with an update mask: naming `content` with none clears it.
    const cleared = await repos(
      "UpdateRepoReadme",
      { repoReadme: { uid }, updateMask: "content" },
      { method: "PATCH", path: `/registry/v2/repos/${uid}/readme?updateMask=content`, body: {} },
    );
    assert.equal(cleared.code, 0, cleared.message);
    assert.deepEqual(cleared.body, { uid });
    const unknown = await repos(
      "UpdateRepoReadme",
      { repoReadme: { uid, content: "x" }, updateMask: "colour" },
      { method: "PATCH", path: `/registry/v2/repos/${uid}/readme?updateMask=colour`, body: { content: "x" } },
    );
    assert.equal(unknown.code, 3);
  });

  test("ListRepos: name, order_by name desc and created_at desc, skip, totalCount as a string", async () => {
    const parent = newChildUid(folder);
    await insertGroup(server().store.db, { uid: parent, parent_uid: folder, name: "list", description: "", create_time: 1, update_time: 1 });
    for (let i = 0; i < 12; i++) assert.equal((await createRepo(parent, { name: `${wireName}/item-${String(i).padStart(2, "0")}` })).code, 0);
    const list = (query: string, request: JsonObject) => repos("ListRepos", request, { method: "GET", path: `/registry/v2/repos?${query}` });
    const skipped = await list(`uidp.children_of=${parent}&page_size=5&skip=10&order_by=name`, { uidp: { childrenOf: parent }, pageSize: 5, skip: 10, orderBy: "name" });
    assert.equal(skipped.code, 0, skipped.message);
    assert.deepEqual((skipped.body?.repos as JsonObject[]).map((r) => r.name), [`${wireName}/item-10`, `${wireName}/item-11`]);
    assert.equal(skipped.body?.skipped, 10);
    assert.equal(skipped.body?.totalCount, "12");
    const named = await list(`name=${encodeURIComponent(`${wireName}/item-03`)}`, { name: `${wireName}/item-03` });
    assert.deepEqual((named.body?.repos as JsonObject[]).map((r) => r.name), [`${wireName}/item-03`]);
    const desc = await list(`uidp.children_of=${parent}&order_by=name%20desc&page_size=2`, { uidp: { childrenOf: parent }, orderBy: "name desc", pageSize: 2 });
    assert.deepEqual((desc.body?.repos as JsonObject[]).map((r) => r.name), [`${wireName}/item-11`, `${wireName}/item-10`]);
    assert.ok(desc.body?.nextPageToken);
    const created = await list(`uidp.children_of=${parent}&order_by=created_at%20desc&page_size=1`, { uidp: { childrenOf: parent }, orderBy: "created_at desc", pageSize: 1 });
    assert.equal(created.code, 0, created.message);
    assert.equal((created.body?.repos as JsonObject[]).length, 1);
  });

  test("ListTags leaves out referrer, date and epoch tags unless include_* asks for them (hosted); `name` finds any", async () => {
    const repoUid = (await createRepo(folder, { name: `${wireName}/forms` })).body!.uid as string;
    const referrer = `sha256-${"ab".repeat(32)}.sig`;
    for (const name of ["latest", "1.2", "1.2-r1", "1.2-20240131", referrer]) assert.equal((await createTag(repoUid, { name, digest: digest(3) })).code, 0);
    const names = async (flags: Record<string, boolean | string>) => {
      const query = new URLSearchParams({ "uidp.children_of": repoUid, order_by: "name", ...Object.fromEntries(Object.entries(flags).map(([k, v]) => [k.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`), String(v)])) });
      const out = await tags("ListTags", { uidp: { childrenOf: repoUid }, orderBy: "name", ...flags }, { method: "GET", path: `/registry/v2/tags?${query}` });
      assert.equal(out.code, 0, out.message);
      assert.equal(out.body?.totalCount, String(((out.body?.tags as JsonObject[] | undefined) ?? []).length), "the total counts what is listed");
      return ((out.body?.tags as JsonObject[] | undefined) ?? []).map((t) => t.name);
    };
    assert.deepEqual(await names({}), ["1.2", "latest"]);
    assert.deepEqual(await names({ includeReferrers: true }), ["1.2", "latest", referrer]);
    assert.deepEqual(await names({ includeDates: true }), ["1.2", "1.2-20240131", "latest"]);
    assert.deepEqual(await names({ includeEpochs: true }), ["1.2", "1.2-r1", "latest"]);
    assert.deepEqual(await names({ includeReferrers: true, includeDates: true, includeEpochs: true }), ["1.2", "1.2-20240131", "1.2-r1", "latest", referrer]);
    assert.deepEqual(await names({ name: "1.2-r1" }), ["1.2-r1"], "a tag asked for by name is found whatever its form");
  });

  test("tags: create, move, list with uidp.children_of, bad digest, 129-char name; delete with empty bodies", async () => {
    const made = await createRepo(folder, { name: `${wireName}/tags` });
    const repoUid = made.body!.uid as string;
    const first = await createTag(repoUid, { name: "latest", digest: digest(1) });
    assert.equal(first.code, 0, first.message);
    const moved = await createTag(repoUid, { name: "latest", digest: digest(2), deprecated: true });
    assert.equal(moved.body?.uid, first.body?.uid);
    assert.equal(moved.body?.deprecated, true);
    await createTag(repoUid, { name: "v1", digest: digest(1) });
    const listed = await tags("ListTags", { uidp: { childrenOf: repoUid }, orderBy: "name" }, { method: "GET", path: `/registry/v2/tags?uidp.children_of=${repoUid}&order_by=name` });
    assert.equal(listed.code, 0, listed.message);
    assert.deepEqual((listed.body?.tags as JsonObject[]).map((t) => [t.name, t.digest]), [["latest", digest(2)], ["v1", digest(1)]]);
    assert.equal(listed.body?.totalCount, "2");

    // Spec 4.2: `deprecated` is a plain field; there is no server-side filter on it and no v2 end-of-life endpoint.
    assert.deepEqual((listed.body?.tags as JsonObject[]).map((t) => t.deprecated ?? false), [true, false], "deprecated tags are listed with the others");
    if (wireName === "rest") {
      const filter = await fetch(`http://127.0.0.1:${server().apiPort}/registry/v2/tags?uidp.children_of=${repoUid}&order_by=name&deprecated=false`, {
        headers: { authorization: `Bearer ${server().ownerToken}` },
      });
      assert.equal(filter.status, 400, "a deprecated filter is an unknown parameter, refused (it would filter nothing)");
      const refused = (await filter.json()) as { message: string };
      assert.match(refused.message, /deprecated: Unknown name "deprecated"/);
      // No route: 404. Under a tag's path, `eol` can only be read as a (malformed) tag uid: 400 on `uid`.
      const expected: Array<[string, number, string]> = [
        ["/registry/v2/eol", 404, "no route"],
        ["/registry/v2/endOfLife", 404, "no route"],
        [`/registry/v2/tags/${repoUid}/eol`, 400, "uid: is not a valid uid"],
      ];
      for (const [path, status, message] of expected) {
        const res = await fetch(`http://127.0.0.1:${server().apiPort}${path}`, { headers: { authorization: `Bearer ${server().ownerToken}` } });
        assert.equal(res.status, status, path);
        assert.match(((await res.json()) as { message: string }).message, new RegExp(message), path);
      }
    }

    const bad = await createTag(repoUid, { name: "ok", digest: "sha256:abc" });
    assert.equal(bad.code, 3);
    assert.equal(reasonOf(bad), "INVALID_ARGUMENT");
    assert.deepEqual(violations(bad), ["tag.digest"]);
    const long = await createTag(repoUid, { name: "a".repeat(129), digest: digest(1) });
    assert.equal(long.code, 3);
    assert.deepEqual(violations(long), ["tag.name"]);
    if (wireName === "rest") assert.equal(long.httpStatus, 400);

    const refused = await repos("DeleteRepo", { uid: repoUid }, { method: "DELETE", path: `/registry/v2/repos/${repoUid}` });
    assert.equal(refused.code, 9);
    assert.equal((detailOf(refused, "PreconditionFailure")?.violations as JsonObject[])[0].type, "RESOURCE_NOT_EMPTY");
    for (const t of listed.body?.tags as JsonObject[]) {
      const del = await tags("DeleteTag", { uid: t.uid as string }, { method: "DELETE", path: `/registry/v2/tags/${t.uid}` });
      assert.equal(del.code, 0, del.message);
      assert.deepEqual(del.body, {});
    }
    const deleted = await repos("DeleteRepo", { uid: repoUid }, { method: "DELETE", path: `/registry/v2/repos/${repoUid}` });
    assert.equal(deleted.code, 0, deleted.message);
    assert.deepEqual(deleted.body, {});
  });
});
