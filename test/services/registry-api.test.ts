import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { timestampMs } from "@bufbuild/protobuf/wkt";
import { Code, ConnectError } from "@connectrpc/connect";
import { BadRequestSchema } from "../../gen/google/rpc/error_details_pb.js";
import { newChildUid } from "../../src/aip/uidp.js";
import { readTagHistory } from "../../src/domains/registry/store/tag-history.js";
import { startInProcess, type InProcessApi } from "../support/in-process.js";

const code = (e: unknown) => ConnectError.from(e).code;
const fields = (e: unknown) =>
  ConnectError.from(e)
    .findDetails(BadRequestSchema)
    .flatMap((d) => d.fieldViolations.map((v) => v.field));
const digest = (n: number) => `sha256:${n.toString(16).padStart(64, "0")}`;
let api: InProcessApi;

before(async () => {
  api = await startInProcess();
});
after(() => api.close());

test("repos and tags: owner, viewer and a stranger; permission before existence", async () => {
  const owner = api.as(api.ownerToken);
  const a = await api.groups.createGroup({ parent: api.org, group: { name: "reg-a" } }, owner);
  const b = await api.groups.createGroup({ parent: api.org, group: { name: "reg-b" } }, owner);
  const repo = await api.repos.createRepo({ parent: a.uid, repo: { name: "team/app", description: "d" } }, owner);
  assert.match(repo.uid, new RegExp(`^${a.uid}/[0-9a-f]{16}$`));
  const tag = await api.tags.createTag({ parent: repo.uid, tag: { name: "latest", digest: digest(1) } }, owner);
  assert.match(tag.uid, new RegExp(`^${repo.uid}/[0-9a-f]{16}$`));

  const viewer = api.as(await api.identityWith(api.org, "viewer", a.uid));
  assert.equal((await api.repos.getRepo({ uid: repo.uid }, viewer)).name, "team/app");
  assert.equal((await api.tags.getTag({ uid: tag.uid }, viewer)).digest, digest(1));
  assert.equal((await api.tags.listTags({ uidp: { childrenOf: repo.uid } }, viewer)).tags.length, 1);
  await assert.rejects(api.repos.createRepo({ parent: a.uid, repo: { name: "no" } }, viewer), (e) => code(e) === Code.PermissionDenied);
  await assert.rejects(api.repos.updateRepo({ repo: { uid: repo.uid, description: "x" } }, viewer), (e) => code(e) === Code.PermissionDenied);
  await assert.rejects(api.repos.deleteRepo({ uid: repo.uid }, viewer), (e) => code(e) === Code.PermissionDenied);
  await assert.rejects(api.tags.createTag({ parent: repo.uid, tag: { name: "x", digest: digest(2) } }, viewer), (e) => code(e) === Code.PermissionDenied);
  await assert.rejects(api.tags.deleteTag({ uid: tag.uid }, viewer), (e) => code(e) === Code.PermissionDenied);
  await assert.rejects(api.repos.updateRepoReadme({ repoReadme: { uid: repo.uid, content: "x" } }, viewer), (e) => code(e) === Code.PermissionDenied);

  const stranger = api.as(await api.identityWith(api.org, "owner", b.uid));
  await assert.rejects(api.repos.getRepo({ uid: repo.uid }, stranger), (e) => code(e) === Code.PermissionDenied);
  await assert.rejects(api.repos.getRepo({ uid: newChildUid(a.uid) }, stranger), (e) => code(e) === Code.PermissionDenied, "denied before existence");
  await assert.rejects(api.tags.getTag({ uid: newChildUid(repo.uid) }, stranger), (e) => code(e) === Code.PermissionDenied);
  await assert.rejects(api.tags.getTag({ uid: newChildUid(newChildUid(a.uid)) }, stranger), (e) => code(e) === Code.PermissionDenied);
  await assert.rejects(api.tags.createTag({ parent: newChildUid(a.uid), tag: { name: "x", digest: digest(1) } }, stranger), (e) => code(e) === Code.PermissionDenied);
  assert.equal((await api.repos.listRepos({ name: "team/app" }, stranger)).totalCount, 0n, "narrowed in the query");
  assert.equal((await api.tags.listTags({ uidp: { childrenOf: repo.uid } }, stranger)).tags.length, 0);

  // With the capability, a missing resource is NOT_FOUND.
  await assert.rejects(api.repos.getRepo({ uid: newChildUid(a.uid) }, viewer), (e) => code(e) === Code.NotFound);
  await assert.rejects(api.tags.getTag({ uid: newChildUid(repo.uid) }, viewer), (e) => code(e) === Code.NotFound);
  await assert.rejects(api.tags.createTag({ parent: newChildUid(a.uid), tag: { name: "x", digest: digest(1) } }, owner), (e) => code(e) === Code.NotFound);
});

test("validation names each failing field", async () => {
  const owner = api.as(api.ownerToken);
  const repo = await api.repos.createRepo({ parent: api.org, repo: { name: "valid" } }, owner);
  await assert.rejects(api.repos.createRepo({ parent: api.org, repo: { name: "Bad Name", description: "x".repeat(1025) } }, owner), (e) => {
    assert.equal(code(e), Code.InvalidArgument);
    assert.deepEqual(fields(e), ["repo.name", "repo.description"]);
    return true;
  });
  await assert.rejects(api.repos.createRepo({ parent: api.org, repo: { name: "a".repeat(256) } }, owner), (e) => fields(e).includes("repo.name"));
  await assert.rejects(api.repos.createRepo({ parent: api.org, repo: { name: "a//b" } }, owner), (e) => fields(e).includes("repo.name"));
  await assert.rejects(api.repos.createRepo({ parent: api.org, repo: { name: "valid" } }, owner), (e) => code(e) === Code.AlreadyExists);
  await assert.rejects(api.tags.createTag({ parent: repo.uid, tag: { name: "-bad", digest: "sha256:xyz" } }, owner), (e) => {
    assert.equal(code(e), Code.InvalidArgument);
    assert.deepEqual(fields(e), ["tag.name", "tag.digest"]);
    return true;
  });
  await assert.rejects(api.tags.createTag({ parent: repo.uid, tag: { name: "a".repeat(129), digest: digest(1) } }, owner), (e) => fields(e).includes("tag.name"));
  assert.ok(await api.tags.createTag({ parent: repo.uid, tag: { name: "a".repeat(128), digest: digest(1) } }, owner));
  await assert.rejects(api.repos.updateRepoReadme({ repoReadme: { uid: repo.uid, content: "x".repeat(256 * 1024 + 1) } }, owner), (e) => fields(e).includes("repo_readme.content"));
  await assert.rejects(api.tags.listTags({ digest: "md5:1" }, owner), (e) => fields(e).includes("digest"));
});

test("a repo with tags cannot be deleted; readme round-trips", async () => {
  const owner = api.as(api.ownerToken);
  const repo = await api.repos.createRepo({ parent: api.org, repo: { name: "with-tags" } }, owner);
  assert.equal((await api.repos.getRepoReadme({ uid: repo.uid }, owner)).content, "");
  const readme = await api.repos.updateRepoReadme({ repoReadme: { uid: repo.uid, content: "# Hello\n\nworld" } }, owner);
  assert.deepEqual({ uid: readme.uid, content: readme.content }, { uid: repo.uid, content: "# Hello\n\nworld" });
  assert.equal((await api.repos.getRepoReadme({ uid: repo.uid }, owner)).content, "# Hello\n\nworld");
  const tag = await api.tags.createTag({ parent: repo.uid, tag: { name: "v1", digest: digest(1) } }, owner);
  await assert.rejects(api.repos.deleteRepo({ uid: repo.uid }, owner), (e) => code(e) === Code.FailedPrecondition);
  await api.tags.deleteTag({ uid: tag.uid }, owner);
  await api.repos.deleteRepo({ uid: repo.uid }, owner);
  await assert.rejects(api.repos.getRepo({ uid: repo.uid }, owner), (e) => code(e) === Code.NotFound);
});

test("creating an existing tag moves it, keeps its uid and writes history only on a digest change", async () => {
  const owner = api.as(api.ownerToken);
  const repo = await api.repos.createRepo({ parent: api.org, repo: { name: "moves" } }, owner);
  const history = () => readTagHistory(api.store.db, repo.uid, "latest", { limit: 1000 });
  const first = await api.tags.createTag({ parent: repo.uid, tag: { name: "latest", digest: digest(1) } }, owner);
  const moved = await api.tags.createTag({ parent: repo.uid, tag: { name: "latest", digest: digest(2), deprecated: true } }, owner);
  assert.equal(moved.uid, first.uid);
  assert.equal(moved.digest, digest(2));
  assert.equal(moved.deprecated, true);
  assert.deepEqual((await history()).map((h) => [h.seq, h.digest]), [[1, digest(1)], [2, digest(2)]]);
  await api.tags.createTag({ parent: repo.uid, tag: { name: "latest", digest: digest(2), deprecated: true } }, owner);
  assert.equal((await history()).length, 2, "the same digest writes no record");
  const current = await api.tags.getTag({ uid: first.uid }, owner);
  assert.equal((await history())[1].update_time, timestampMs(current.updateTime!), "a record carries the tag's update_time");
  await api.tags.deleteTag({ uid: first.uid }, owner);
  assert.equal((await history()).length, 2, "deleting keeps the history");
});

test("property: after any sequence of creates, moves and deletes, each tag's last history digest is its digest", async () => {
  const owner = api.as(api.ownerToken);
  const repo = await api.repos.createRepo({ parent: api.org, repo: { name: "property" } }, owner);
  let seed = 12345;
  const rand = (n: number) => {
    seed = (seed * 1103515245 + 12345) % 2 ** 31;
    return seed % n;
  };
  const names = ["a", "b", "c"];
  for (let step = 0; step < 60; step++) {
    const name = names[rand(names.length)];
    if (rand(4) === 0) {
      const listed = await api.tags.listTags({ uidp: { childrenOf: repo.uid }, name }, owner);
      for (const t of listed.tags) await api.tags.deleteTag({ uid: t.uid }, owner);
    } else {
      await api.tags.createTag({ parent: repo.uid, tag: { name, digest: digest(rand(4)) } }, owner);
    }
    const tags = (await api.tags.listTags({ uidp: { childrenOf: repo.uid } }, owner)).tags;
    for (const t of tags) {
      const h = await readTagHistory(api.store.db, repo.uid, t.name, { limit: 1000 });
      assert.equal(h.at(-1)?.digest, t.digest, `step ${step}: ${t.name}`);
      for (let i = 1; i < h.length; i++) assert.notEqual(h[i].digest, h[i - 1].digest, "no record repeats the previous digest");
    }
  }
});

test("a Get answered again from its kept row: each mapper's own answer, and a write shows at once", async () => {
  const owner = api.as(api.ownerToken);
  const repo = await api.repos.createRepo({ parent: api.org, repo: { name: "kept/get", description: "first" } }, owner);
  await api.repos.updateRepoReadme({ repoReadme: { uid: repo.uid, content: "# first" } }, owner);
  // GetRepo and GetRepoReadme read the same row and map it two ways: neither answers the other's message.
  for (let i = 0; i < 2; i++) {
    assert.equal((await api.repos.getRepo({ uid: repo.uid }, owner)).description, "first");
    assert.equal((await api.repos.getRepoReadme({ uid: repo.uid }, owner)).content, "# first");
  }
  await api.repos.updateRepo({ repo: { uid: repo.uid, description: "second" }, updateMask: { paths: ["description"] } }, owner);
  assert.equal((await api.repos.getRepo({ uid: repo.uid }, owner)).description, "second", "the write shows in the next Get");
  await api.repos.updateRepoReadme({ repoReadme: { uid: repo.uid, content: "# second" } }, owner);
  assert.equal((await api.repos.getRepoReadme({ uid: repo.uid }, owner)).content, "# second");
});
