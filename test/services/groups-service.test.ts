import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { Code, ConnectError } from "@connectrpc/connect";
import { newChildUid } from "../../src/aip/uidp.js";
import { startInProcess, type InProcessApi } from "../support/in-process.js";

const code = (e: unknown) => ConnectError.from(e).code;
let api: InProcessApi;

before(async () => {
  api = await startInProcess(":memory:", { organizationCreation: "anyone" });
});
after(() => api.close());

test("a viewer bound on a folder reads that subtree and nothing else", async () => {
  const owner = api.as(api.ownerToken);
  const a = await api.groups.createGroup({ parent: api.org, group: { name: "a" } }, owner);
  const b = await api.groups.createGroup({ parent: api.org, group: { name: "b" } }, owner);
  const a1 = await api.groups.createGroup({ parent: a.uid, group: { name: "a1" } }, owner);
  const viewer = api.as(await api.identityWith(api.org, "viewer", a.uid));

  assert.equal((await api.groups.getGroup({ uid: a1.uid }, viewer)).name, "a1");
  await assert.rejects(api.groups.getGroup({ uid: b.uid }, viewer), (e) => code(e) === Code.PermissionDenied);
  await assert.rejects(api.groups.getGroup({ uid: api.org }, viewer), (e) => code(e) === Code.PermissionDenied);
  await assert.rejects(api.groups.getGroup({ uid: newChildUid(b.uid) }, viewer), (e) => code(e) === Code.PermissionDenied, "denied before existence is known");
  await assert.rejects(api.groups.getGroup({ uid: newChildUid(a.uid) }, viewer), (e) => code(e) === Code.NotFound);

  const listed = await api.groups.listGroups({ pageSize: 1 }, viewer);
  assert.equal(listed.totalCount, 2n, "the count is narrowed in the query, not filtered after");
  assert.equal(listed.groups.length, 1);
  const rest = await api.groups.listGroups({ pageSize: 1, pageToken: listed.nextPageToken }, viewer);
  assert.deepEqual([listed.groups[0].uid, rest.groups[0].uid].sort(), [a.uid, a1.uid].sort());
  assert.equal(rest.nextPageToken, "");

  await assert.rejects(api.groups.createGroup({ parent: a.uid, group: { name: "no" } }, viewer), (e) => code(e) === Code.PermissionDenied);
  await assert.rejects(api.groups.updateGroup({ group: { uid: a.uid, name: "no" } }, viewer), (e) => code(e) === Code.PermissionDenied);
  await assert.rejects(api.groups.deleteGroup({ uid: a1.uid }, viewer), (e) => code(e) === Code.PermissionDenied);
  assert.equal((await api.groups.getGroup({ uid: a1.uid }, owner)).name, "a1", "nothing was changed");
});

test("a page token is refused with another filter, and every page is authorized again", async () => {
  const owner = api.as(api.ownerToken);
  const parent = await api.groups.createGroup({ parent: api.org, group: { name: "paged" } }, owner);
  for (const name of ["p1", "p2", "p3"]) await api.groups.createGroup({ parent: parent.uid, group: { name } }, owner);
  const first = await api.groups.listGroups({ uidp: { childrenOf: parent.uid }, pageSize: 2 }, owner);
  assert.equal(first.groups.length, 2);
  await assert.rejects(
    api.groups.listGroups({ uidp: { childrenOf: parent.uid }, name: "p3", pageSize: 2, pageToken: first.nextPageToken }, owner),
    (e) => code(e) === Code.InvalidArgument,
  );
  const elsewhere = await api.groups.createGroup({ parent: api.org, group: { name: "elsewhere" } }, owner);
  const stranger = api.as(await api.identityWith(api.org, "viewer", elsewhere.uid));
  const other = await api.groups.listGroups({ uidp: { childrenOf: parent.uid }, pageSize: 2, pageToken: first.nextPageToken }, stranger);
  assert.equal(other.groups.length, 0, "a token grants nothing");
  assert.equal(other.totalCount, 0n);
});

test("bad uids are INVALID_ARGUMENT naming the field", async () => {
  const owner = api.as(api.ownerToken);
  for (const [call, field] of [
    [() => api.groups.getGroup({ uid: "nope" }, owner), "uid"],
    [() => api.groups.createGroup({ parent: "ABC", group: { name: "x" } }, owner), "parent"],
    [() => api.groups.listGroups({ uidp: { childrenOf: "x/y" } }, owner), "uidp.children_of"],
  ] as const) {
    await assert.rejects(call(), (e) => {
      const err = ConnectError.from(e);
      return err.code === Code.InvalidArgument && err.rawMessage.includes(field);
    });
  }
});

test("organization names must fit registry paths; folder names follow the hosted pattern", async () => {
  const owner = api.as(api.ownerToken);
  await assert.rejects(api.groups.createGroup({ parent: "", group: { name: "has spaces" } }, owner), (e) => code(e) === Code.InvalidArgument);
  await assert.rejects(api.groups.createGroup({ parent: "", group: { name: "x".repeat(65) } }, owner), (e) => code(e) === Code.InvalidArgument);
  assert.ok(await api.groups.createGroup({ parent: api.org, group: { name: "team alpha.eu_1-b" } }, owner));
  await assert.rejects(api.groups.createGroup({ parent: api.org, group: { name: "Team Alpha (EU)" } }, owner), (e) => code(e) === Code.InvalidArgument);
  await assert.rejects(api.groups.createGroup({ parent: api.org, group: { name: "x".repeat(129) } }, owner), (e) => code(e) === Code.InvalidArgument);
  await assert.rejects(api.groups.createGroup({ parent: api.org, group: { name: "bad\u0000name" } }, owner), (e) => code(e) === Code.InvalidArgument);
});

test("totalCount is counted on the first page and carried by the page token to the later ones (AIP-158)", async () => {
  const owner = api.as(api.ownerToken);
  const folder = await api.groups.createGroup({ parent: api.org, group: { name: "counted" } }, owner);
  for (const name of ["c1", "c2", "c3"]) await api.groups.createGroup({ parent: folder.uid, group: { name } }, owner);
  const first = await api.groups.listGroups({ uidp: { childrenOf: folder.uid }, pageSize: 2 }, owner);
  assert.equal(first.totalCount, 3n);
  await api.groups.createGroup({ parent: folder.uid, group: { name: "c4" } }, owner);
  const second = await api.groups.listGroups({ uidp: { childrenOf: folder.uid }, pageSize: 2, pageToken: first.nextPageToken }, owner);
  assert.equal(second.totalCount, 3n, "the listing's total as its first page counted it");
  const again = await api.groups.listGroups({ uidp: { childrenOf: folder.uid }, pageSize: 10 }, owner);
  assert.equal(again.totalCount, 4n, "a new first page counts again");
  const after = again.groups.map((g) => g.uid).filter((uid) => Buffer.compare(Buffer.from(uid), Buffer.from(first.groups[1].uid)) > 0);
  assert.deepEqual(second.groups.map((g) => g.uid), after.slice(0, 2), "the rows themselves are read anew (c4 among them when it sorts after page one)");
});
