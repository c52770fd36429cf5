import assert from "node:assert/strict";
import { test } from "node:test";
import type { JsonObject } from "@bufbuild/protobuf";
import { IdentitiesService } from "../../gen/platform/iam/v2/identities_service_pb.js";
import { RoleBindingsService } from "../../gen/platform/iam/v2/role_bindings_service_pb.js";
import { RolesService } from "../../gen/platform/iam/v2/roles_service_pb.js";
import { GroupsService } from "../../gen/platform/iam/v2/groups_service_pb.js";
import { newChildUid } from "../../src/aip/uidp.js";
import { BUILT_IN_ROLES, builtInRole } from "../../src/access/capabilities.js";
import { describeOverWires } from "../support/over-wires.js";
import { detailOf, methodOf, reasonOf, violatedFields as fields } from "../support/wires.js";

/** Each protocol runs the same cases and must reach the same results and codes. */
const { server } = describeOverWires("IAM core", {}, ({ server, wire, wireName }) => {
  const call = (service: Parameters<typeof methodOf>[0], name: string, request: JsonObject, rest: { method: string; path: string; body?: JsonObject }) =>
    wire().call(methodOf(service, name), request, rest, server().ownerToken);
  const createGroup = (parent: string, group: JsonObject) =>
    call(GroupsService, "CreateGroup", { parent, group }, { method: "POST", path: `/iam/v2/groups/${parent}`, body: group });
  const createIdentity = (parent: string, identity: JsonObject) =>
    call(IdentitiesService, "CreateIdentity", { parent, identity }, { method: "POST", path: `/iam/v2/identities/${parent}`, body: identity });
  const createRole = (parent: string, role: JsonObject) =>
    call(RolesService, "CreateRole", { parent, role }, { method: "POST", path: `/iam/v2/roles/${parent}`, body: role });
  const createBinding = (parent: string, roleBinding: JsonObject) =>
    call(RoleBindingsService, "CreateRoleBinding", { parent, roleBinding }, { method: "POST", path: `/iam/v2/roleBindings/${parent}`, body: roleBinding });

  test("CreateIdentity with a claim match, then GetIdentity", async () => {
    const body = { name: `ci ${wireName}`, description: "CI", claimMatch: { issuer: "https://token.actions.githubusercontent.com", subject: "repo:acme/app:ref:refs/heads/main" } };
    const out = await createIdentity(server().org.uid, body);
    assert.equal(out.code, 0, out.message);
    assert.match(String(out.body?.uid), new RegExp(`^${server().org.uid}/[0-9a-f]{16}$`));
    assert.deepEqual(out.body?.claimMatch, body.claimMatch);
    assert.ok(out.body?.lastSeenTime, "lastSeenTime is set in the create response (spec 2)");
    assert.equal(out.body.lastSeenTime, out.body.createTime);
    const uid = out.body!.uid as string;
    const read = await call(IdentitiesService, "GetIdentity", { uid }, { method: "GET", path: `/iam/v2/identities/${uid}` });
    assert.equal(read.code, 0, read.message);
    assert.equal(read.body?.name, `ci ${wireName}`);
  });

  test("CreateIdentity with an empty body is INVALID_ARGUMENT naming identity.name", async () => {
    const out = await createIdentity(server().org.uid, {});
    assert.equal(out.code, 3);
    assert.equal(reasonOf(out), "INVALID_ARGUMENT");
    assert.deepEqual(fields(out), ["identity.name"]);
    assert.match(out.message ?? "", /^Invalid argument: identity\.name: /);
    if (wireName === "rest") assert.equal(out.httpStatus, 400);
  });

  test("an identity's issuer must be an https URL: INVALID_ARGUMENT naming the field, on create and on update", async () => {
    const cases: Array<[JsonObject, string]> = [
      [{ claimMatch: { issuer: "notaurl", subject: "s" } }, "identity.claim_match.issuer"],
      [{ claimMatch: { issuer: "http://issuer.example", subject: "s" } }, "identity.claim_match.issuer"],
      [{ claimMatch: { issuer: "ftp://issuer.example", subject: "s" } }, "identity.claim_match.issuer"],
      [{ claimMatch: { issuer: "https://user:pw@issuer.example", subject: "s" } }, "identity.claim_match.issuer"],
      [{ staticKeys: { issuer: "notaurl", subject: "s", issuerKeys: '{"keys":[{"kty":"EC"}]}' } }, "identity.static_keys.issuer"],
    ];
    for (const [relationship, field] of cases) {
      const out = await createIdentity(server().org.uid, { name: "bad issuer", ...relationship });
      assert.equal(out.code, 3, JSON.stringify(relationship));
      assert.equal(reasonOf(out), "INVALID_ARGUMENT");
      assert.deepEqual(fields(out), [field], JSON.stringify(relationship));
      if (wireName === "rest") assert.equal(out.httpStatus, 400);
    }
    const http = await createIdentity(server().org.uid, { name: "bad issuer", claimMatch: { issuer: "http://issuer.example", subject: "s" } });
    assert.match(http.message ?? "", /https URL \(plain http only where the operator allows it: serve --allow-http-issuers\)/);

    const made = await createIdentity(server().org.uid, { name: `issuer ${wireName}`, claimMatch: { issuer: "https://issuer.example/tenant", subject: "s" } });
    assert.equal(made.code, 0, made.message);
    const uid = made.body!.uid as string;
    const patch = { claimMatch: { issuer: "notaurl", subject: "s" } };
    const refused = await call(
      IdentitiesService,
      "UpdateIdentity",
      { identity: { uid, ...patch }, updateMask: "claimMatch" },
      { method: "PATCH", path: `/iam/v2/identities/${uid}?updateMask=claimMatch`, body: patch },
    );
    assert.equal(refused.code, 3);
    assert.deepEqual(fields(refused), ["identity.claim_match.issuer"]);
    const read = await call(IdentitiesService, "GetIdentity", { uid }, { method: "GET", path: `/iam/v2/identities/${uid}` });
    assert.equal((read.body?.claimMatch as JsonObject).issuer, "https://issuer.example/tenant", "nothing was written");
  });

  test("a missing identity is NOT_FOUND with ResourceInfo", async () => {
    const uid = newChildUid(server().org.uid);
    const out = await call(IdentitiesService, "GetIdentity", { uid }, { method: "GET", path: `/iam/v2/identities/${uid}` });
    assert.equal(out.code, 5);
    assert.equal(detailOf(out, "ResourceInfo")?.resourceType, "identity");
    assert.equal(detailOf(out, "ResourceInfo")?.resourceName, uid);
    if (wireName === "rest") assert.equal(out.httpStatus, 404);
  });

  test("ListRoles shows the built-in roles", async () => {
    const out = await call(RolesService, "ListRoles", { name: "viewer" }, { method: "GET", path: "/iam/v2/roles?name=viewer" });
    assert.equal(out.code, 0, out.message);
    assert.deepEqual((out.body?.roles as JsonObject[]).map((r) => r.uid), [builtInRole("viewer").uid]);
    const all = await call(RolesService, "ListRoles", { pageSize: 200 }, { method: "GET", path: "/iam/v2/roles?pageSize=200" });
    const names = (all.body?.roles as JsonObject[]).map((r) => r.name);
    for (const role of BUILT_IN_ROLES) assert.ok(names.includes(role.name), role.name);
  });

  test("custom role, hydrated binding, a bound role cannot be deleted, deletes return an empty body", async () => {
    const role = await createRole(server().org.uid, { name: `pullers-${wireName}`, description: "pull", capabilities: ["CAP_REPO_LIST", "CAP_REGISTRY_PULL"] });
    assert.equal(role.code, 0, role.message);
    assert.deepEqual(role.body?.capabilities, ["CAP_REPO_LIST", "CAP_REGISTRY_PULL"]);
    const roleUid = role.body!.uid as string;

    const who = await createIdentity(server().org.uid, { name: `puller ${wireName}`, claimMatch: { issuer: "https://issuer.example", subject: "puller" } });
    const identityUid = who.body!.uid as string;
    const binding = await createBinding(server().org.uid, { identityUid, roleUid });
    assert.equal(binding.code, 0, binding.message);
    assert.deepEqual(binding.body?.identity, { uid: identityUid, name: `puller ${wireName}`, subject: "puller", issuer: "https://issuer.example" });
    assert.deepEqual(binding.body?.group, { uid: server().org.uid, name: server().org.name });
    assert.deepEqual(binding.body?.role, { uid: roleUid, name: `pullers-${wireName}`, description: "pull" });
    assert.ok(binding.body?.createTime);
    assert.equal(binding.body?.updateTime, undefined);
    const bindingUid = binding.body!.uid as string;

    const dup = await createBinding(server().org.uid, { identityUid, roleUid });
    assert.equal(dup.code, 6);
    if (wireName === "rest") assert.equal(dup.httpStatus, 409);

    const refused = await call(RolesService, "DeleteRole", { uid: roleUid }, { method: "DELETE", path: `/iam/v2/roles/${roleUid}` });
    assert.equal(refused.code, 9);
    assert.equal(reasonOf(refused), "FAILED_PRECONDITION");
    assert.equal((detailOf(refused, "PreconditionFailure")?.violations as JsonObject[])[0].type, "RESOURCE_IN_USE");
    if (wireName === "rest") assert.equal(refused.httpStatus, 400);

    const unbound = await call(RoleBindingsService, "DeleteRoleBinding", { uid: bindingUid }, { method: "DELETE", path: `/iam/v2/roleBindings/${bindingUid}` });
    assert.equal(unbound.code, 0, unbound.message);
    assert.deepEqual(unbound.body, {});
    const deleted = await call(RolesService, "DeleteRole", { uid: roleUid }, { method: "DELETE", path: `/iam/v2/roles/${roleUid}` });
    assert.equal(deleted.code, 0, deleted.message);
    assert.deepEqual(deleted.body, {});
    const gone = await call(IdentitiesService, "DeleteIdentity", { uid: identityUid }, { method: "DELETE", path: `/iam/v2/identities/${identityUid}` });
    assert.equal(gone.code, 0, gone.message);
    assert.deepEqual(gone.body, {});
  });

  test("CreateRole with CAP_UNSPECIFIED is INVALID_ARGUMENT naming role.capabilities[i]", async () => {
    const out = await createRole(server().org.uid, { name: `bad-caps-${wireName}`, capabilities: ["CAP_REPO_LIST", "CAP_UNSPECIFIED"] });
    assert.equal(out.code, 3);
    assert.deepEqual(fields(out), ["role.capabilities[1]"]);
  });

  test("a built-in role cannot be changed", async () => {
    const uid = builtInRole("viewer").uid;
    const out = await call(RolesService, "UpdateRole", { role: { uid, description: "x" } }, { method: "PATCH", path: `/iam/v2/roles/${uid}`, body: { description: "x" } });
    assert.equal(out.code, 9);
    assert.equal((detailOf(out, "PreconditionFailure")?.violations as JsonObject[])[0].type, "BUILT_IN_ROLE");
  });

  test("UpdateIdentity over PATCH changes the fields given", async () => {
    const made = await createIdentity(server().org.uid, { name: `patch ${wireName}`, description: "before" });
    const uid = made.body!.uid as string;
    const out = await call(
      IdentitiesService,
      "UpdateIdentity",
      { identity: { uid, description: "after" } },
      { method: "PATCH", path: `/iam/v2/identities/${uid}`, body: { description: "after" } },
    );
    assert.equal(out.code, 0, out.message);
    assert.equal(out.body?.name, `patch ${wireName}`);
    assert.equal(out.body?.description, "after");
  });

  test("deleting a group with an identity is FAILED_PRECONDITION / RESOURCE_NOT_EMPTY", async () => {
    const group = await createGroup(server().org.uid, { name: `holds identity ${wireName}` });
    const groupUid = group.body!.uid as string;
    assert.equal((await createIdentity(groupUid, { name: "resident" })).code, 0);
    const out = await call(GroupsService, "DeleteGroup", { uid: groupUid }, { method: "DELETE", path: `/iam/v2/groups/${groupUid}` });
    assert.equal(out.code, 9);
    assert.equal(reasonOf(out), "FAILED_PRECONDITION");
    assert.equal((detailOf(out, "PreconditionFailure")?.violations as JsonObject[])[0].type, "RESOURCE_NOT_EMPTY");
    assert.match(out.message ?? "", /^Precondition failed: /);
  });
});

test("REST: a create request with no body at all is the same validation error", async () => {
  const res = await fetch(`${server().apiUrl}/iam/v2/identities/${server().org.uid}`, { method: "POST", headers: { authorization: `Bearer ${server().ownerToken}` } });
  assert.equal(res.status, 400);
  const body = (await res.json()) as JsonObject;
  assert.equal(body.code, 3);
  assert.match(String(body.message), /^Invalid argument: identity\.name: /);
});
