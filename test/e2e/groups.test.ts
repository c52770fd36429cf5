import assert from "node:assert/strict";
import { test } from "node:test";
import type { JsonObject } from "@bufbuild/protobuf";
import { GroupsService } from "../../gen/platform/iam/v2/groups_service_pb.js";
import { PingService } from "../../gen/platform/ping/v2/ping_pb.js";
import { newChildUid } from "../../src/aip/uidp.js";
import { bootstrapOrganization } from "../../src/server/bootstrap.js";
import { describeOverWires } from "../support/over-wires.js";
import type { TestServer } from "../support/test-server.js";
import { detailOf, methodOf, reasonOf } from "../support/wires.js";

const rpc = (name: string) => methodOf(GroupsService, name);

/** An organization the bootstrap owner has no binding on. */
let foreignOrg: string;
const bootstrapForeignOrg = async (server: TestServer) => {
  foreignOrg = (await bootstrapOrganization(server.store, "other-org", Date.now())).organization.uid;
};

/** Each protocol runs the same cases and must reach the same results and codes. */
const { server } = describeOverWires("GroupsService", { organizationCreation: "anyone", prepare: bootstrapForeignOrg }, ({ server, wire, wireName }) => {
  const call = (name: string, request: JsonObject, rest: { method: string; path: string; body?: JsonObject }, token: string | null = server().ownerToken) =>
    wire().call(rpc(name), request, rest, token ?? undefined);
  const create = (parent: string, group: JsonObject) =>
    call("CreateGroup", { parent, group }, { method: "POST", path: `/iam/v2/groups${parent ? `/${parent}` : ""}`, body: group });

  test("Ping answers without a credential", async () => {
    const out = await wire().call(methodOf(PingService, "Ping"), {}, { method: "GET", path: "/ping/v2/ping" }, undefined);
    assert.equal(out.code, 0);
    assert.deepEqual(out.body, { response: "pong" });
  });

  test("GetGroup returns the organization", async () => {
    const out = await call("GetGroup", { uid: server().org.uid }, { method: "GET", path: `/iam/v2/groups/${server().org.uid}` });
    assert.equal(out.code, 0, out.message);
    assert.equal(out.body?.uid, server().org.uid);
    assert.equal(out.body?.name, "acme");
    assert.match(String(out.body?.createTime), /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/);
  });

  test("a missing group is NOT_FOUND with ResourceInfo (HTTP 404)", async () => {
    const uid = newChildUid(server().org.uid);
    const out = await call("GetGroup", { uid }, { method: "GET", path: `/iam/v2/groups/${uid}` });
    assert.equal(out.code, 5);
    assert.equal(reasonOf(out), "NOT_FOUND");
    assert.equal(detailOf(out, "ResourceInfo")?.resourceName, uid);
    assert.equal(detailOf(out, "ResourceInfo")?.resourceType, "group");
    if (wireName === "rest") assert.equal(out.httpStatus, 404);
  });

  test("no credential is UNAUTHENTICATED (HTTP 401)", async () => {
    const out = await call("GetGroup", { uid: server().org.uid }, { method: "GET", path: `/iam/v2/groups/${server().org.uid}` }, null);
    assert.equal(out.code, 16);
    assert.equal(reasonOf(out), "UNAUTHENTICATED");
    if (wireName === "rest") assert.equal(out.httpStatus, 401);
  });

  test("a forged credential is UNAUTHENTICATED", async () => {
    const forged = server().ownerToken.slice(0, -4) + (server().ownerToken.endsWith("AAAA") ? "BBBB" : "AAAA");
    const out = await call("GetGroup", { uid: server().org.uid }, { method: "GET", path: `/iam/v2/groups/${server().org.uid}` }, forged);
    assert.equal(out.code, 16);
  });

  test("another organization is PERMISSION_DENIED, whether the group exists or not", async () => {
    for (const uid of [foreignOrg, newChildUid(foreignOrg)]) {
      const out = await call("GetGroup", { uid }, { method: "GET", path: `/iam/v2/groups/${uid}` });
      assert.equal(out.code, 7, uid);
      assert.equal(reasonOf(out), "PERMISSION_DENIED");
      if (wireName === "rest") assert.equal(out.httpStatus, 403);
    }
  });

  test("CreateGroup makes a folder under a group", async () => {
    const out = await create(server().org.uid, { name: `team ${wireName}`, description: "d" });
    assert.equal(out.code, 0, out.message);
    assert.match(String(out.body?.uid), new RegExp(`^${server().org.uid}/[0-9a-f]{16}$`));
    assert.equal(out.body?.name, `team ${wireName}`);
  });

  test("CreateGroup with an empty parent makes an organization owned by its creator", async () => {
    const made = await create("", { name: `org-${wireName}` });
    assert.equal(made.code, 0, made.message);
    assert.match(String(made.body?.uid), /^[0-9a-f]{40}$/);
    const read = await call("GetGroup", { uid: made.body!.uid as string }, { method: "GET", path: `/iam/v2/groups/${made.body!.uid}` });
    assert.equal(read.code, 0, read.message);
  });

  test("CreateGroup without a name is INVALID_ARGUMENT naming the field", async () => {
    const out = await create(server().org.uid, {});
    assert.equal(out.code, 3);
    assert.equal(reasonOf(out), "INVALID_ARGUMENT");
    assert.deepEqual((detailOf(out, "BadRequest")?.fieldViolations as JsonObject[]).map((v) => v.field), ["group.name"]);
    assert.match(out.message ?? "", /^Invalid argument: group\.name: /);
    if (wireName === "rest") assert.equal(out.httpStatus, 400);
  });

  test("a duplicate sibling name is ALREADY_EXISTS", async () => {
    await create(server().org.uid, { name: `dup ${wireName}` });
    const out = await create(server().org.uid, { name: `dup ${wireName}` });
    assert.equal(out.code, 6);
    if (wireName === "rest") assert.equal(out.httpStatus, 409);
  });

  test("UpdateGroup: no mask changes the fields given; a mask only its fields; * replaces all", async () => {
    const made = await create(server().org.uid, { name: `patch ${wireName}`, description: "before" });
    const uid = made.body!.uid as string;
    const patch = (group: JsonObject, mask?: string) =>
      call(
        "UpdateGroup",
        mask === undefined ? { group: { uid, ...group } } : { group: { uid, ...group }, updateMask: mask },
        { method: "PATCH", path: `/iam/v2/groups/${uid}${mask === undefined ? "" : `?updateMask=${encodeURIComponent(mask)}`}`, body: group },
      );

    let out = await patch({ description: "after" });
    assert.equal(out.code, 0, out.message);
    assert.equal(out.body?.name, `patch ${wireName}`);
    assert.equal(out.body?.description, "after");

    out = await patch({ name: "ignored", description: "masked" }, "description");
    assert.equal(out.body?.name, `patch ${wireName}`, "a name outside the mask is ignored");
    assert.equal(out.body?.description, "masked");

    out = await patch({ name: `renamed ${wireName}` }, "*");
    assert.equal(out.body?.name, `renamed ${wireName}`);
    assert.equal(out.body?.description, undefined, "* resets the omitted description");

    out = await patch({ name: "x" }, "colour");
    assert.equal(out.code, 3);
    assert.equal((detailOf(out, "BadRequest")?.fieldViolations as JsonObject[])[0].field, "update_mask");
  });

  test("DeleteGroup refuses a group with children, then deletes a leaf with an empty response", async () => {
    const parent = await create(server().org.uid, { name: `parent ${wireName}` });
    const parentUid = parent.body!.uid as string;
    const child = await create(parentUid, { name: "child" });
    const del = (uid: string) => call("DeleteGroup", { uid }, { method: "DELETE", path: `/iam/v2/groups/${uid}` });

    const refused = await del(parentUid);
    assert.equal(refused.code, 9);
    assert.equal(reasonOf(refused), "FAILED_PRECONDITION");
    assert.equal((detailOf(refused, "PreconditionFailure")?.violations as JsonObject[])[0].type, "RESOURCE_NOT_EMPTY");
    assert.match(refused.message ?? "", /^Precondition failed: /);
    if (wireName === "rest") assert.equal(refused.httpStatus, 400);

    const deleted = await del(child.body!.uid as string);
    assert.equal(deleted.code, 0, deleted.message);
    assert.deepEqual(deleted.body, {});
    assert.equal((await del(parentUid)).code, 0);
    assert.equal((await del(parentUid)).code, 5);
  });

  test("ListGroups: children_of, exact name, skip and totalCount as a string", async () => {
    const parent = await create(server().org.uid, { name: `list ${wireName}` });
    const parentUid = parent.body!.uid as string;
    for (let i = 0; i < 12; i++) await create(parentUid, { name: `item ${String(i).padStart(2, "0")}` });
    const list = (query: string, request: JsonObject) => call("ListGroups", request, { method: "GET", path: `/iam/v2/groups?${query}` });

    const skipped = await list(`uidp.children_of=${parentUid}&page_size=5&skip=10&order_by=name`, {
      uidp: { childrenOf: parentUid },
      pageSize: 5,
      skip: 10,
      orderBy: "name",
    });
    assert.equal(skipped.code, 0, skipped.message);
    assert.deepEqual((skipped.body?.groups as JsonObject[]).map((g) => g.name), ["item 10", "item 11"]);
    assert.equal(skipped.body?.skipped, 10);
    assert.equal(skipped.body?.totalCount, "12");

    const named = await list(`uidp.children_of=${parentUid}&name=item%2003`, { uidp: { childrenOf: parentUid }, name: "item 03" });
    assert.deepEqual((named.body?.groups as JsonObject[]).map((g) => g.name), ["item 03"]);

    const desc = await list(`uidp.children_of=${parentUid}&order_by=name%20desc&page_size=2`, {
      uidp: { childrenOf: parentUid },
      orderBy: "name desc",
      pageSize: 2,
    });
    assert.deepEqual((desc.body?.groups as JsonObject[]).map((g) => g.name), ["item 11", "item 10"]);
    assert.ok(desc.body?.nextPageToken);

    const bad = await list("page_size=-1", { pageSize: -1 });
    assert.equal(bad.code, 3);
    assert.equal((detailOf(bad, "BadRequest")?.fieldViolations as JsonObject[])[0].field, "page_size");
  });

  test("ListGroups never shows groups the caller holds nothing on", async () => {
    const out = await call("ListGroups", { pageSize: 200 }, { method: "GET", path: "/iam/v2/groups?page_size=200" });
    assert.equal(out.code, 0, out.message);
    const uids = (out.body?.groups as JsonObject[]).map((g) => g.uid as string);
    assert.ok(uids.includes(server().org.uid));
    assert.ok(!uids.some((u) => u.startsWith(foreignOrg)));
  });
});

test("REST serves /v2beta1/ as an alias of /v2/", async () => {
  const res = await fetch(`${server().apiUrl}/iam/v2beta1/groups/${server().org.uid}`, { headers: { authorization: `Bearer ${server().ownerToken}` } });
  assert.equal(res.status, 200);
  assert.equal(((await res.json()) as JsonObject).uid, server().org.uid);
});

test("an unknown REST path is 404 with a Status body", async () => {
  const res = await fetch(`${server().apiUrl}/iam/v2/nothing-here`);
  assert.equal(res.status, 404);
  assert.equal(((await res.json()) as JsonObject).code, 5);
});
