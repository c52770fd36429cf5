import assert from "node:assert/strict";
import { test } from "node:test";
import type { JsonObject } from "@bufbuild/protobuf";
import { GroupsService } from "../../gen/platform/iam/v2/groups_service_pb.js";
import { serveOverWires } from "../support/over-wires.js";
import { methodOf, reasonOf, violatedFields } from "../support/wires.js";

/**
 * A path variable's value is percent-decoded after matching (decisions.md): a UIDP whose `/` a
 * client sent as `%2F` (as OpenAPI generators do) reaches the RPC as the UIDP; a malformed
 * escape is the field's INVALID_ARGUMENT.
 */
const { server, wire } = serveOverWires();

const call = (name: string, method: string, path: string, body?: JsonObject) => wire("rest").call(methodOf(GroupsService, name), {}, { method, path, body }, server().ownerToken);
const encoded = (uid: string) => uid.replaceAll("/", "%2F");

test("a UIDP sent percent-encoded in the path is the UIDP: Create, Get, Patch and Delete", async () => {
  const folder = await call("CreateGroup", "POST", `/iam/v2/groups/${server().org.uid}`, { name: "outer" });
  assert.equal(folder.code, 0, folder.message);
  const folderUid = folder.body!.uid as string;

  const child = await call("CreateGroup", "POST", `/iam/v2/groups/${encoded(folderUid)}`, { name: "inner" });
  assert.equal(child.code, 0, child.message);
  const childUid = child.body!.uid as string;
  assert.equal(childUid.slice(0, childUid.lastIndexOf("/")), folderUid, "created under the decoded parent");

  const read = await call("GetGroup", "GET", `/iam/v2/groups/${encoded(childUid)}`);
  assert.equal(read.code, 0, read.message);
  assert.equal(read.body!.uid, childUid);
  // Half encoded, half not: the same group.
  const [org, ...rest] = childUid.split("/");
  assert.equal((await call("GetGroup", "GET", `/iam/v2/groups/${org}%2f${rest.join("/")}`)).body?.uid, childUid);

  const patched = await call("UpdateGroup", "PATCH", `/iam/v2/groups/${encoded(childUid)}?updateMask=description`, { description: "renamed" });
  assert.equal(patched.code, 0, patched.message);
  assert.equal(patched.body!.description, "renamed");

  const gone = await call("DeleteGroup", "DELETE", `/iam/v2/groups/${encoded(childUid)}`);
  assert.equal(gone.code, 0, gone.message);
  assert.equal((await call("GetGroup", "GET", `/iam/v2/groups/${childUid}`)).code, 5);
});

test("a malformed escape in a path variable is INVALID_ARGUMENT naming its field, not a 404 or a 500", async () => {
  for (const [name, method, path, field] of [
    ["GetGroup", "GET", `/iam/v2/groups/${server().org.uid}%2zz`, "uid"],
    ["DeleteGroup", "DELETE", `/iam/v2/groups/${server().org.uid}%`, "uid"],
    ["CreateGroup", "POST", `/iam/v2/groups/${server().org.uid}%C3`, "parent"],
    ["UpdateGroup", "PATCH", `/iam/v2/groups/${server().org.uid}/%zz`, "group.uid"],
  ] as const) {
    const out = await call(name, method, path, method === "POST" || method === "PATCH" ? { name: "x" } : undefined);
    assert.equal(out.httpStatus, 400, `${method} ${path}: ${out.message}`);
    assert.equal(out.code, 3);
    assert.equal(reasonOf(out), "INVALID_ARGUMENT");
    assert.deepEqual(violatedFields(out), [field]);
    assert.match(out.message ?? "", /malformed percent-encoding/);
  }
});
