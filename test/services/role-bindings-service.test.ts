import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { Code, ConnectError } from "@connectrpc/connect";
import { BadRequestSchema, PreconditionFailureSchema, ResourceInfoSchema } from "../../gen/google/rpc/error_details_pb.js";
import { Cap } from "../../gen/platform/common/v1/authorization_pb.js";
import { newChildUid } from "../../src/aip/uidp.js";
import { builtInRole } from "../../src/access/capabilities.js";
import { startInProcess, type InProcessApi } from "../support/in-process.js";

const code = (e: unknown) => ConnectError.from(e).code;
const badFields = (e: unknown) => ConnectError.from(e).findDetails(BadRequestSchema).flatMap((d) => d.fieldViolations.map((v) => v.field));
const preconditionTypes = (e: unknown) => ConnectError.from(e).findDetails(PreconditionFailureSchema).flatMap((d) => d.violations.map((v) => v.type));
const resourceType = (e: unknown) => ConnectError.from(e).findDetails(ResourceInfoSchema)[0]?.resourceType;

let api: InProcessApi;
let owner: { headers: Record<string, string> };
const viewerRole = builtInRole("viewer").uid;

before(async () => {
  api = await startInProcess();
  owner = api.as(api.ownerToken);
});
after(() => api.close());

async function identity(parent: string, name: string) {
  return api.identities.createIdentity(
    { parent, identity: { name, description: `${name} d`, relationship: { case: "claimMatch", value: { issuer: "https://issuer.example", subject: `sub-${name}` } } } },
    owner,
  );
}

test("CreateRoleBinding returns the binding hydrated, and the binding grants access at once", async () => {
  const team = await api.groups.createGroup({ parent: api.org, group: { name: "rb-team", description: "the team" } }, owner);
  const who = await identity(api.org, "rb one");
  const token = api.as(await api.tokenFor(who.uid));
  await assert.rejects(api.groups.getGroup({ uid: team.uid }, token), (e) => code(e) === Code.PermissionDenied);

  const binding = await api.roleBindings.createRoleBinding({ parent: team.uid, roleBinding: { identityUid: who.uid, roleUid: viewerRole } }, owner);
  assert.match(binding.uid, new RegExp(`^${team.uid}/[0-9a-f]{16}$`));
  assert.deepEqual(
    { identity: { ...binding.identity, $typeName: undefined }, group: { ...binding.group, $typeName: undefined }, role: { ...binding.role, $typeName: undefined } },
    {
      identity: { $typeName: undefined, uid: who.uid, name: "rb one", description: "rb one d", subject: "sub-rb one", issuer: "https://issuer.example" },
      group: { $typeName: undefined, uid: team.uid, name: "rb-team", description: "the team" },
      role: { $typeName: undefined, uid: viewerRole, name: "viewer", description: builtInRole("viewer").description },
    },
  );
  assert.ok(binding.createTime);
  assert.equal((await api.groups.getGroup({ uid: team.uid }, token)).name, "rb-team");
  assert.deepEqual(await api.roleBindings.getRoleBinding({ uid: binding.uid }, owner), binding);

  await assert.rejects(
    api.roleBindings.createRoleBinding({ parent: team.uid, roleBinding: { identityUid: who.uid, roleUid: viewerRole } }, owner),
    (e) => code(e) === Code.AlreadyExists,
  );
});

test("missing identity or role is NOT_FOUND with ResourceInfo; malformed uids are named", async () => {
  const who = await identity(api.org, "rb two");
  await assert.rejects(
    api.roleBindings.createRoleBinding({ parent: api.org, roleBinding: { identityUid: newChildUid(api.org), roleUid: viewerRole } }, owner),
    (e) => code(e) === Code.NotFound && resourceType(e) === "identity",
  );
  await assert.rejects(
    api.roleBindings.createRoleBinding({ parent: api.org, roleBinding: { identityUid: who.uid, roleUid: newChildUid(api.org) } }, owner),
    (e) => code(e) === Code.NotFound && resourceType(e) === "role",
  );
  await assert.rejects(api.roleBindings.createRoleBinding({ parent: api.org, roleBinding: { identityUid: "not/a/uid", roleUid: "x" } }, owner), (e) => {
    assert.equal(code(e), Code.InvalidArgument);
    assert.deepEqual(badFields(e), ["role_binding.identity_uid", "role_binding.role_uid"]);
    return true;
  });
  await assert.rejects(api.roleBindings.createRoleBinding({ parent: api.org }, owner), (e) =>
    ["role_binding.identity_uid", "role_binding.role_uid"].every((f) => badFields(e).includes(f)),
  );
  await assert.rejects(api.roleBindings.getRoleBinding({ uid: newChildUid(api.org) }, owner), (e) => code(e) === Code.NotFound && resourceType(e) === "roleBinding");
  await assert.rejects(api.roleBindings.listRoleBindings({ identity: "bad" }, owner), (e) => badFields(e).includes("identity"));
});

test("scope: an identity binds only on its group or below; a custom role only where it is defined or below", async () => {
  const a = await api.groups.createGroup({ parent: api.org, group: { name: "rb-a" } }, owner);
  const a1 = await api.groups.createGroup({ parent: a.uid, group: { name: "rb-a1" } }, owner);
  const b = await api.groups.createGroup({ parent: api.org, group: { name: "rb-b" } }, owner);
  const inA = await identity(a.uid, "scoped");
  await assert.rejects(
    api.roleBindings.createRoleBinding({ parent: api.org, roleBinding: { identityUid: inA.uid, roleUid: viewerRole } }, owner),
    (e) => code(e) === Code.FailedPrecondition && preconditionTypes(e).includes("IDENTITY_OUT_OF_SCOPE"),
  );
  await assert.rejects(
    api.roleBindings.createRoleBinding({ parent: b.uid, roleBinding: { identityUid: inA.uid, roleUid: viewerRole } }, owner),
    (e) => code(e) === Code.FailedPrecondition,
  );
  assert.ok(await api.roleBindings.createRoleBinding({ parent: a1.uid, roleBinding: { identityUid: inA.uid, roleUid: viewerRole } }, owner));

  const roleInB = await api.roles.createRole({ parent: b.uid, role: { name: "b-only", capabilities: [Cap.REPO_LIST] } }, owner);
  const orgWide = await identity(api.org, "org wide");
  await assert.rejects(
    api.roleBindings.createRoleBinding({ parent: a.uid, roleBinding: { identityUid: orgWide.uid, roleUid: roleInB.uid } }, owner),
    (e) => code(e) === Code.FailedPrecondition && preconditionTypes(e).includes("ROLE_OUT_OF_SCOPE"),
  );
  assert.ok(await api.roleBindings.createRoleBinding({ parent: b.uid, roleBinding: { identityUid: orgWide.uid, roleUid: roleInB.uid } }, owner));
});

test("anti-escalation: the caller must hold every capability of the role it grants", async () => {
  const binderRole = await api.roles.createRole(
    { parent: api.org, role: { name: "binder", capabilities: [Cap.IAM_ROLE_BINDINGS_CREATE, Cap.IAM_ROLE_BINDINGS_UPDATE, Cap.REPO_LIST] } },
    owner,
  );
  const binder = await identity(api.org, "binder");
  await api.roleBindings.createRoleBinding({ parent: api.org, roleBinding: { identityUid: binder.uid, roleUid: binderRole.uid } }, owner);
  const asBinder = api.as(await api.tokenFor(binder.uid));
  const target = await identity(api.org, "target");

  await assert.rejects(
    api.roleBindings.createRoleBinding({ parent: api.org, roleBinding: { identityUid: target.uid, roleUid: builtInRole("owner").uid } }, asBinder),
    (e) => code(e) === Code.PermissionDenied,
  );
  const small = await api.roles.createRole({ parent: api.org, role: { name: "small", capabilities: [Cap.REPO_LIST] } }, owner);
  const ok = await api.roleBindings.createRoleBinding({ parent: api.org, roleBinding: { identityUid: target.uid, roleUid: small.uid } }, asBinder);
  await assert.rejects(
    api.roleBindings.updateRoleBinding({ roleBinding: { uid: ok.uid, roleUid: viewerRole } }, asBinder),
    (e) => code(e) === Code.PermissionDenied,
    "updating to a bigger role is checked too",
  );
  const viewerIdentity = api.as(await api.identityWith(api.org, "viewer", api.org));
  await assert.rejects(
    api.roleBindings.createRoleBinding({ parent: api.org, roleBinding: { identityUid: target.uid, roleUid: viewerRole } }, viewerIdentity),
    (e) => code(e) === Code.PermissionDenied,
  );
  await assert.rejects(api.roleBindings.deleteRoleBinding({ uid: ok.uid }, viewerIdentity), (e) => code(e) === Code.PermissionDenied);
  await assert.rejects(api.roleBindings.getRoleBinding({ uid: newChildUid(api.org) }, asBinder), (e) => code(e) === Code.PermissionDenied);
});

test("ListRoleBindings: filters, narrowed totals, paging", async () => {
  const team = await api.groups.createGroup({ parent: api.org, group: { name: "rb-list" } }, owner);
  const other = await api.groups.createGroup({ parent: api.org, group: { name: "rb-other" } }, owner);
  const people = [];
  for (const name of ["l1", "l2", "l3"]) {
    const who = await identity(api.org, name);
    people.push(who);
    await api.roleBindings.createRoleBinding({ parent: team.uid, roleBinding: { identityUid: who.uid, roleUid: viewerRole } }, owner);
  }
  await api.roleBindings.createRoleBinding({ parent: other.uid, roleBinding: { identityUid: people[0].uid, roleUid: builtInRole("editor").uid } }, owner);

  const byGroup = await api.roleBindings.listRoleBindings({ group: team.uid, pageSize: 2 }, owner);
  assert.equal(byGroup.totalCount, 3n);
  assert.equal(byGroup.roleBindings.length, 2);
  const rest = await api.roleBindings.listRoleBindings({ group: team.uid, pageSize: 2, pageToken: byGroup.nextPageToken }, owner);
  assert.equal(rest.roleBindings.length, 1);
  assert.equal(rest.nextPageToken, "");

  const byIdentity = await api.roleBindings.listRoleBindings({ identity: people[0].uid }, owner);
  assert.deepEqual(byIdentity.roleBindings.map((b) => b.group?.uid).sort(), [team.uid, other.uid].sort());
  const byRole = await api.roleBindings.listRoleBindings({ role: builtInRole("editor").uid, uidp: { descendantsOf: api.org } }, owner);
  assert.deepEqual(byRole.roleBindings.map((b) => b.identity?.uid), [people[0].uid]);
  assert.equal(byRole.roleBindings[0].role?.name, "editor");

  const lister = api.as(await api.identityWith(api.org, "viewer", other.uid));
  const narrowed = await api.roleBindings.listRoleBindings({ pageSize: 200 }, lister);
  assert.deepEqual(narrowed.roleBindings.map((b) => b.group?.uid), [other.uid, other.uid], "only bindings on the visible subtree");
  assert.equal(narrowed.totalCount, 2n);
  const desc = await api.roleBindings.listRoleBindings({ group: team.uid, orderBy: "create_time desc" }, owner);
  assert.equal(desc.roleBindings.length, 3);
  await assert.rejects(api.roleBindings.listRoleBindings({ orderBy: "name" }, owner), (e) => code(e) === Code.InvalidArgument);
});

test("UpdateRoleBinding changes the role only; DeleteRoleBinding removes it", async () => {
  const who = await identity(api.org, "upd");
  const binding = await api.roleBindings.createRoleBinding({ parent: api.org, roleBinding: { identityUid: who.uid, roleUid: viewerRole } }, owner);
  const changed = await api.roleBindings.updateRoleBinding({ roleBinding: { uid: binding.uid, roleUid: builtInRole("editor").uid } }, owner);
  assert.equal(changed.role?.name, "editor");
  assert.equal(changed.identity?.uid, who.uid);
  const other = await identity(api.org, "other");
  await assert.rejects(
    api.roleBindings.updateRoleBinding({ roleBinding: { uid: binding.uid, identityUid: other.uid } }, owner),
    (e) => badFields(e).includes("role_binding.identity_uid"),
  );
  await assert.rejects(
    api.roleBindings.updateRoleBinding({ roleBinding: { uid: binding.uid }, updateMask: { paths: ["colour"] } }, owner),
    (e) => badFields(e).includes("update_mask"),
  );
  await api.roleBindings.deleteRoleBinding({ uid: binding.uid }, owner);
  await assert.rejects(api.roleBindings.getRoleBinding({ uid: binding.uid }, owner), (e) => code(e) === Code.NotFound);
  await api.roleBindings.deleteRoleBinding({ uid: binding.uid }, owner); // idempotent (AIP-135): no NOT_FOUND the second time
});

test("ListRoleBindings answered again from kept rows is exactly what a fresh read answers: per caller, and changed by a write", async () => {
  const team = await api.groups.createGroup({ parent: api.org, group: { name: "rb-kept" } }, owner);
  const who = await identity(api.org, "kept one");
  await api.roleBindings.createRoleBinding({ parent: team.uid, roleBinding: { identityUid: who.uid, roleUid: viewerRole } }, owner);
  const confined = api.as(await api.identityWith(api.org, "viewer", team.uid));
  const request = { uidp: { descendantsOf: api.org }, pageSize: 500 };
  const groupsOf = (answer: { roleBindings: Array<{ group?: { uid: string } }> }) => answer.roleBindings.map((b) => b.group?.uid);

  const first = await api.roleBindings.listRoleBindings(request, owner);
  const confinedFirst = await api.roleBindings.listRoleBindings(request, confined);
  assert.ok(groupsOf(first).some((uid) => uid !== team.uid), "the owner sees bindings beyond the team");
  assert.ok(groupsOf(confinedFirst).every((uid) => uid === team.uid), "the confined caller sees only the team's, even right after the owner's read");
  assert.deepEqual(groupsOf(await api.roleBindings.listRoleBindings(request, owner)), groupsOf(first), "the owner's answer again");
  assert.equal((await api.roleBindings.listRoleBindings(request, confined)).totalCount, confinedFirst.totalCount);

  const added = await identity(api.org, "kept two");
  const binding = await api.roleBindings.createRoleBinding({ parent: team.uid, roleBinding: { identityUid: added.uid, roleUid: viewerRole } }, owner);
  const after = await api.roleBindings.listRoleBindings(request, confined);
  assert.equal(after.totalCount, confinedFirst.totalCount! + 1n, "a write changes the next answer");
  assert.ok(after.roleBindings.some((b) => b.uid === binding.uid));
  await api.roleBindings.updateRoleBinding({ roleBinding: { uid: binding.uid, roleUid: builtInRole("editor").uid } }, owner);
  const updated = await api.roleBindings.listRoleBindings(request, confined);
  assert.equal(updated.roleBindings.find((b) => b.uid === binding.uid)?.role?.name, "editor", "a hydrated field (the role) follows the write");
});
