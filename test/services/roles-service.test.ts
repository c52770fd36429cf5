import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { Code, ConnectError } from "@connectrpc/connect";
import { BadRequestSchema, PreconditionFailureSchema, ResourceInfoSchema } from "../../gen/google/rpc/error_details_pb.js";
import { Cap } from "../../gen/platform/common/v1/authorization_pb.js";
import { newChildUid, newRootUid } from "../../src/aip/uidp.js";
import { BUILT_IN_ROLES, builtInRole } from "../../src/access/capabilities.js";
import { startInProcess, type InProcessApi } from "../support/in-process.js";

const code = (e: unknown) => ConnectError.from(e).code;
const badFields = (e: unknown) => ConnectError.from(e).findDetails(BadRequestSchema).flatMap((d) => d.fieldViolations.map((v) => v.field));
const preconditionTypes = (e: unknown) => ConnectError.from(e).findDetails(PreconditionFailureSchema).flatMap((d) => d.violations.map((v) => v.type));

let api: InProcessApi;
let owner: { headers: Record<string, string> };

before(async () => {
  api = await startInProcess();
  owner = api.as(api.ownerToken);
});
after(() => api.close());

test("CreateRole makes a custom role under its group with its capabilities", async () => {
  const role = await api.roles.createRole(
    { parent: api.org, role: { name: "deployer", description: "push", capabilities: [Cap.REGISTRY_PUSH, Cap.REPO_LIST, Cap.REGISTRY_PUSH] } },
    owner,
  );
  assert.match(role.uid, new RegExp(`^${api.org}/[0-9a-f]{16}$`));
  assert.deepEqual([...role.capabilities].sort(), [Cap.REPO_LIST, Cap.REGISTRY_PUSH].sort(), "duplicates are dropped");
  const read = await api.roles.getRole({ uid: role.uid }, owner);
  assert.equal(read.name, "deployer");
  await assert.rejects(api.roles.createRole({ parent: api.org, role: { name: "deployer" } }, owner), (e) => code(e) === Code.AlreadyExists);
});

test("validation: names, unknown and unspecified capabilities by index, malformed uids", async () => {
  const cases: Array<[Parameters<typeof api.roles.createRole>[0], string[]]> = [
    [{ parent: api.org }, ["role.name"]],
    [{ parent: api.org, role: { name: "Has Space" } }, ["role.name"]],
    [{ parent: api.org, role: { name: "x".repeat(65), description: "d".repeat(1025) } }, ["role.name", "role.description"]],
    [{ parent: api.org, role: { name: "ok", capabilities: [Cap.REPO_LIST, 9999 as Cap, Cap.UNSPECIFIED] } }, ["role.capabilities[1]", "role.capabilities[2]"]],
    [{ parent: "ABC", role: { name: "ok" } }, ["parent"]],
  ];
  for (const [request, fields] of cases) {
    await assert.rejects(api.roles.createRole(request, owner), (e) => {
      assert.equal(code(e), Code.InvalidArgument, JSON.stringify(fields));
      assert.deepEqual(badFields(e), fields);
      return true;
    });
  }
  await assert.rejects(api.roles.getRole({ uid: "nope" }, owner), (e) => code(e) === Code.InvalidArgument && badFields(e).includes("uid"));
  await assert.rejects(api.roles.listRoles({ orderBy: "capabilities" }, owner), (e) => code(e) === Code.InvalidArgument);
});

test("built-in roles: readable and listed for every caller, immutable even for an owner", async () => {
  const lone = await api.identities.createIdentity({ parent: api.org, identity: { name: "lone" } }, owner);
  const nobody = api.as(await api.tokenFor(lone.uid));
  const viewerRole = builtInRole("viewer");
  assert.equal((await api.roles.getRole({ uid: viewerRole.uid }, nobody)).name, "viewer");
  await assert.rejects(api.roles.getRole({ uid: newRootUid() }, nobody), (e) => code(e) === Code.NotFound);

  const listed = await api.roles.listRoles({ pageSize: 200 }, nobody);
  assert.deepEqual(listed.roles.map((r) => r.name).sort(), BUILT_IN_ROLES.map((r) => r.name).sort());
  assert.equal(listed.totalCount, BigInt(BUILT_IN_ROLES.length));
  assert.deepEqual((await api.roles.listRoles({ name: "owner" }, nobody)).roles.map((r) => r.uid), [builtInRole("owner").uid]);

  for (const call of [
    () => api.roles.updateRole({ role: { uid: viewerRole.uid, description: "mine" } }, owner),
    () => api.roles.deleteRole({ uid: viewerRole.uid }, owner),
  ]) {
    await assert.rejects(call(), (e) => code(e) === Code.FailedPrecondition && preconditionTypes(e).includes("BUILT_IN_ROLE"));
  }
  await assert.rejects(api.roles.deleteRole({ uid: newRootUid() }, owner), (e) => code(e) === Code.NotFound);
});

test("authorization of custom roles: viewer vs owner vs no binding, narrowed lists", async () => {
  const a = await api.groups.createGroup({ parent: api.org, group: { name: "roles-a" } }, owner);
  const b = await api.groups.createGroup({ parent: api.org, group: { name: "roles-b" } }, owner);
  const inA = await api.roles.createRole({ parent: a.uid, role: { name: "a-role", capabilities: [Cap.REPO_LIST] } }, owner);
  const inB = await api.roles.createRole({ parent: b.uid, role: { name: "b-role", capabilities: [Cap.REPO_LIST] } }, owner);
  const viewer = api.as(await api.identityWith(api.org, "viewer", a.uid));

  assert.equal((await api.roles.getRole({ uid: inA.uid }, viewer)).name, "a-role");
  await assert.rejects(api.roles.getRole({ uid: inB.uid }, viewer), (e) => code(e) === Code.PermissionDenied);
  await assert.rejects(api.roles.getRole({ uid: newChildUid(b.uid) }, viewer), (e) => code(e) === Code.PermissionDenied);
  await assert.rejects(api.roles.getRole({ uid: newChildUid(a.uid) }, viewer), (e) => {
    assert.equal(code(e), Code.NotFound);
    assert.equal(ConnectError.from(e).findDetails(ResourceInfoSchema)[0]?.resourceType, "role");
    return true;
  });
  await assert.rejects(api.roles.createRole({ parent: a.uid, role: { name: "no" } }, viewer), (e) => code(e) === Code.PermissionDenied);
  await assert.rejects(api.roles.updateRole({ role: { uid: inA.uid, description: "no" } }, viewer), (e) => code(e) === Code.PermissionDenied);
  await assert.rejects(api.roles.deleteRole({ uid: inA.uid }, viewer), (e) => code(e) === Code.PermissionDenied);

  const page = await api.roles.listRoles({ pageSize: 2 }, viewer);
  assert.equal(page.totalCount, BigInt(BUILT_IN_ROLES.length + 1), "built-ins plus the visible custom role, counted in the query");
  const all = await api.roles.listRoles({ pageSize: 200 }, viewer);
  assert.ok(all.roles.some((r) => r.uid === inA.uid));
  assert.ok(!all.roles.some((r) => r.uid === inB.uid));
  const under = await api.roles.listRoles({ uidp: { descendantsOf: api.org } }, viewer);
  assert.deepEqual(under.roles.map((r) => r.uid), [inA.uid], "a uidp filter leaves the root-level built-ins out");
});

test("UpdateRole: masks and the anti-escalation rule", async () => {
  const admin = await api.roles.createRole(
    { parent: api.org, role: { name: "role-admin", capabilities: [Cap.IAM_ROLES_LIST, Cap.IAM_ROLES_UPDATE, Cap.REPO_LIST] } },
    owner,
  );
  const adminIdentity = await api.identities.createIdentity({ parent: api.org, identity: { name: "role admin" } }, owner);
  await api.roleBindings.createRoleBinding({ parent: api.org, roleBinding: { identityUid: adminIdentity.uid, roleUid: admin.uid } }, owner);
  const roleAdmin = api.as(await api.tokenFor(adminIdentity.uid));

  const target = await api.roles.createRole({ parent: api.org, role: { name: "target", description: "d", capabilities: [Cap.REPO_LIST, Cap.TAG_LIST] } }, owner);
  await assert.rejects(
    api.roles.updateRole({ role: { uid: target.uid, capabilities: [Cap.REPO_LIST, Cap.REPO_DELETE] } }, roleAdmin),
    (e) => code(e) === Code.PermissionDenied && ConnectError.from(e).rawMessage.includes("CAP_REPO_DELETE"),
  );
  const narrowed = await api.roles.updateRole({ role: { uid: target.uid, capabilities: [Cap.REPO_LIST] } }, roleAdmin);
  assert.deepEqual(narrowed.capabilities, [Cap.REPO_LIST], "removing capabilities needs nothing more");
  assert.equal(narrowed.description, "d");

  const cleared = await api.roles.updateRole({ role: { uid: target.uid }, updateMask: { paths: ["capabilities", "description"] } }, owner);
  assert.deepEqual(cleared.capabilities, []);
  assert.equal(cleared.description, "");
  await assert.rejects(api.roles.updateRole({ role: { uid: target.uid }, updateMask: { paths: ["colour"] } }, owner), (e) => badFields(e).includes("update_mask"));
  await assert.rejects(api.roles.updateRole({ role: { uid: target.uid, capabilities: [Cap.UNSPECIFIED] } }, owner), (e) => badFields(e).includes("role.capabilities[0]"));
  await assert.rejects(api.roles.updateRole({ role: { uid: target.uid, name: "role-admin" } }, owner), (e) => code(e) === Code.AlreadyExists);
});

test("a bound role cannot be deleted (RESOURCE_IN_USE); an unbound one can", async () => {
  const role = await api.roles.createRole({ parent: api.org, role: { name: "bound", capabilities: [Cap.REPO_LIST] } }, owner);
  const who = await api.identities.createIdentity({ parent: api.org, identity: { name: "bound one" } }, owner);
  const binding = await api.roleBindings.createRoleBinding({ parent: api.org, roleBinding: { identityUid: who.uid, roleUid: role.uid } }, owner);
  await assert.rejects(api.roles.deleteRole({ uid: role.uid }, owner), (e) => code(e) === Code.FailedPrecondition && preconditionTypes(e).includes("RESOURCE_IN_USE"));
  await api.roleBindings.deleteRoleBinding({ uid: binding.uid }, owner);
  await api.roles.deleteRole({ uid: role.uid }, owner);
  await assert.rejects(api.roles.getRole({ uid: role.uid }, owner), (e) => code(e) === Code.NotFound);
});
