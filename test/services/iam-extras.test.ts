import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { Code, ConnectError } from "@connectrpc/connect";
import { PreconditionFailureSchema, BadRequestSchema } from "../../gen/google/rpc/error_details_pb.js";
import { newChildUid } from "../../src/api/uidp.js";
import { builtInRole } from "../../src/auth/capabilities.js";
import { startInProcess, type InProcessApi } from "../support/in-process.js";

const code = (e: unknown) => ConnectError.from(e).code;
const badFields = (e: unknown) => ConnectError.from(e).findDetails(BadRequestSchema).flatMap((d) => d.fieldViolations.map((v) => v.field));
const preconditionType = (e: unknown) => ConnectError.from(e).findDetails(PreconditionFailureSchema)[0]?.violations[0]?.type;
const VIEWER = builtInRole("viewer").uid;
const OWNER = builtInRole("owner").uid;
const EDITOR = builtInRole("editor").uid;

let api: InProcessApi;
before(async () => {
  api = await startInProcess();
});
after(() => api.close());

async function folder(name: string, parent = api.org): Promise<string> {
  return (await api.groups.createGroup({ parent, group: { name } }, api.as(api.ownerToken))).uid;
}

const idp = (name: string) => ({
  name,
  issuer: "https://issuer.example.com",
  clientId: "client",
  clientSecret: "s3cret",
  additionalScopes: ["email", "groups"],
  groupsClaim: "groups",
});

test("identity providers: CRUD, the client secret is never returned, viewer vs owner vs stranger", async () => {
  const owner = api.as(api.ownerToken);
  const team = await folder("idp-team");
  const other = await folder("idp-other");
  const viewer = api.as(await api.identityWith(api.org, "viewer", team));
  const stranger = api.as(await api.identityWith(api.org, "viewer", other));

  const made = await api.identityProviders.createIdentityProvider({ parent: team, identityProvider: { ...idp("corp"), defaultRoleUid: VIEWER } }, owner);
  assert.match(made.uid, new RegExp(`^${team}/[0-9a-f]{16}$`));
  assert.equal(made.clientSecret, "");
  assert.deepEqual(made.additionalScopes, ["email", "groups"]);
  assert.equal(made.defaultRoleUid, VIEWER);

  const read = await api.identityProviders.getIdentityProvider({ uid: made.uid }, viewer);
  assert.equal(read.clientSecret, "");
  assert.equal(read.issuer, "https://issuer.example.com");
  await assert.rejects(api.identityProviders.getIdentityProvider({ uid: made.uid }, stranger), (e) => code(e) === Code.PermissionDenied);
  await assert.rejects(api.identityProviders.getIdentityProvider({ uid: newChildUid(other) }, stranger), (e) => code(e) === Code.NotFound);
  await assert.rejects(api.identityProviders.getIdentityProvider({ uid: newChildUid(team) }, stranger), (e) => code(e) === Code.PermissionDenied, "denied before existence");
  await assert.rejects(api.identityProviders.createIdentityProvider({ parent: team, identityProvider: idp("no") }, viewer), (e) => code(e) === Code.PermissionDenied);

  const listed = await api.identityProviders.listIdentityProviders({}, viewer);
  assert.deepEqual(listed.identityProviders.map((p) => p.uid), [made.uid]);
  assert.equal(listed.totalCount, 1n);
  assert.equal(listed.identityProviders[0].clientSecret, "");
  assert.equal((await api.identityProviders.listIdentityProviders({}, stranger)).totalCount, 0n);

  await assert.rejects(api.identityProviders.createIdentityProvider({ parent: team, identityProvider: idp("corp") }, owner), (e) => code(e) === Code.AlreadyExists);

  const patched = await api.identityProviders.updateIdentityProvider({ identityProvider: { uid: made.uid, description: "d" } }, owner);
  assert.equal(patched.description, "d");
  assert.equal(patched.clientSecret, "");
  const stored = await api.store.db.selectFrom("identity_providers").select("client_secret").where("uid", "=", made.uid).executeTakeFirstOrThrow();
  assert.equal(stored.client_secret, "s3cret", "an update without a secret keeps it");
  await api.identityProviders.updateIdentityProvider({ identityProvider: { uid: made.uid, clientSecret: "new" }, updateMask: { paths: ["client_secret"] } }, owner);
  const rotated = await api.store.db.selectFrom("identity_providers").select("client_secret").where("uid", "=", made.uid).executeTakeFirstOrThrow();
  assert.equal(rotated.client_secret, "new");
  await assert.rejects(
    api.identityProviders.updateIdentityProvider({ identityProvider: { uid: made.uid }, updateMask: { paths: ["colour"] } }, owner),
    (e) => code(e) === Code.InvalidArgument && badFields(e).includes("update_mask"),
  );

  await assert.rejects(api.identityProviders.deleteIdentityProvider({ uid: made.uid }, viewer), (e) => code(e) === Code.PermissionDenied);
  await api.identityProviders.deleteIdentityProvider({ uid: made.uid }, owner);
  await assert.rejects(api.identityProviders.getIdentityProvider({ uid: made.uid }, owner), (e) => code(e) === Code.NotFound);
});

test("identity providers: validation names every failing field", async () => {
  const owner = api.as(api.ownerToken);
  await assert.rejects(
    api.identityProviders.createIdentityProvider(
      {
        parent: api.org,
        identityProvider: { name: "x".repeat(129), issuer: "http://insecure.example.com", clientId: "", additionalScopes: ["bad scope"], defaultRoleUid: "nope" },
      },
      owner,
    ),
    (e) => {
      assert.equal(code(e), Code.InvalidArgument);
      assert.deepEqual(badFields(e).sort(), [
        "identity_provider.additional_scopes[0]",
        "identity_provider.client_id",
        "identity_provider.client_secret",
        "identity_provider.default_role_uid",
        "identity_provider.issuer",
        "identity_provider.name",
      ]);
      return true;
    },
  );
  await assert.rejects(api.identityProviders.getIdentityProvider({ uid: "ABC" }, owner), (e) => code(e) === Code.InvalidArgument);
  await assert.rejects(
    api.identityProviders.createIdentityProvider({ parent: api.org, identityProvider: { ...idp("q"), issuer: "https://x.example.com/?a=b" } }, owner),
    (e) => badFields(e).includes("identity_provider.issuer"),
  );
});

test("account associations: one per group, uid is the group's uid, fields validated", async () => {
  const owner = api.as(api.ownerToken);
  const team = await folder("assoc-team");
  const viewer = api.as(await api.identityWith(api.org, "viewer", team));
  const made = await api.accountAssociations.createAccountAssociation(
    {
      parent: team,
      accountAssociation: {
        name: "prod",
        amazonAccountId: "123456789012",
        googleProjectId: "my-project-1",
        googleProjectNumber: "987654321",
        azureTenantId: "0f0e0d0c-0b0a-0908-0706-050403020100",
        githubInstallationIds: ["42", "43"],
      },
    },
    owner,
  );
  assert.equal(made.uid, team);
  assert.deepEqual(made.githubInstallationIds, ["42", "43"]);
  await assert.rejects(api.accountAssociations.createAccountAssociation({ parent: team, accountAssociation: {} }, owner), (e) => code(e) === Code.AlreadyExists);
  assert.equal((await api.accountAssociations.getAccountAssociation({ uid: team }, viewer)).amazonAccountId, "123456789012");
  await assert.rejects(api.accountAssociations.getAccountAssociation({ uid: api.org }, viewer), (e) => code(e) === Code.PermissionDenied);
  await assert.rejects(api.accountAssociations.getAccountAssociation({ uid: api.org }, owner), (e) => code(e) === Code.NotFound);
  await assert.rejects(api.accountAssociations.createAccountAssociation({ parent: newChildUid(team), accountAssociation: {} }, owner), (e) => code(e) === Code.NotFound);

  const listed = await api.accountAssociations.listAccountAssociations({}, viewer);
  assert.deepEqual(listed.accountAssociations.map((a) => a.uid), [team]);

  await assert.rejects(
    api.accountAssociations.updateAccountAssociation(
      { accountAssociation: { uid: team, amazonAccountId: "12", googleProjectId: "Bad_Project", azureClientId: "nope", githubInstallationIds: ["1", "1", "x"] } },
      owner,
    ),
    (e) => {
      assert.deepEqual(badFields(e).sort(), [
        "account_association.amazon_account_id",
        "account_association.azure_client_id",
        "account_association.github_installation_ids[1]",
        "account_association.github_installation_ids[2]",
        "account_association.google_project_id",
      ]);
      return true;
    },
  );
  const patched = await api.accountAssociations.updateAccountAssociation({ accountAssociation: { uid: team, description: "d" }, updateMask: { paths: ["description"] } }, owner);
  assert.equal(patched.description, "d");
  assert.equal(patched.amazonAccountId, "123456789012");

  await assert.rejects(api.accountAssociations.deleteAccountAssociation({ uid: team }, viewer), (e) => code(e) === Code.PermissionDenied);
  await api.accountAssociations.deleteAccountAssociation({ uid: team }, owner);
  await assert.rejects(api.accountAssociations.getAccountAssociation({ uid: team }, owner), (e) => code(e) === Code.NotFound);

  const bare = await folder("assoc-bare");
  await api.accountAssociations.createAccountAssociation({ parent: bare, accountAssociation: { name: "x" } }, owner);
  await assert.rejects(api.groups.deleteGroup({ uid: bare }, owner), (e) => preconditionType(e) === "RESOURCE_NOT_EMPTY");
  await api.accountAssociations.deleteAccountAssociation({ uid: bare }, owner);
  await api.groups.deleteGroup({ uid: bare }, owner);
});

test("group invites: the code is shown once, redeeming binds another identity, which can then read the group", async () => {
  const owner = api.as(api.ownerToken);
  const team = await folder("invite-team");
  const elsewhere = await folder("invite-elsewhere");
  const newcomerToken = await api.identityWith(api.org, "viewer", elsewhere);
  const newcomer = api.as(newcomerToken);
  await assert.rejects(api.groups.getGroup({ uid: team }, newcomer), (e) => code(e) === Code.PermissionDenied);

  const invite = await api.groupInvites.createGroupInvite({ parent: team, groupInvite: { roleUid: VIEWER, email: "new@example.com", singleUse: true } }, owner);
  assert.match(invite.code, /^[A-Za-z0-9_-]{32}$/);
  assert.match(invite.uid, new RegExp(`^${team}/[0-9a-f]{16}$`));
  const week = Number(invite.expireTime!.seconds) - Number(invite.createTime!.seconds);
  assert.equal(week, 7 * 24 * 3600, "default ttl is 7 days");
  assert.equal((await api.groupInvites.getGroupInvite({ uid: invite.uid }, owner)).code, "", "the code is not shown again");
  assert.equal((await api.groupInvites.listGroupInvites({ uidp: { childrenOf: team } }, owner)).groupInvites[0].code, "");
  const stored = await api.store.db.selectFrom("group_invites").selectAll().where("uid", "=", invite.uid).executeTakeFirstOrThrow();
  assert.notEqual(stored.code_hash, invite.code);
  assert.match(stored.code_hash, /^[0-9a-f]{64}$/);

  const redeemed = await api.groupInvites.redeemGroupInvite({ code: invite.code }, newcomer);
  assert.equal(redeemed.groupUid, team);
  assert.equal(redeemed.roleUid, VIEWER);
  assert.equal((await api.groups.getGroup({ uid: team }, newcomer)).name, "invite-team");
  assert.ok((await api.groupInvites.getGroupInvite({ uid: invite.uid }, owner)).usedTime, "a used single-use invite shows when");

  const third = api.as(await api.identityWith(api.org, "viewer", elsewhere));
  await assert.rejects(api.groupInvites.redeemGroupInvite({ code: invite.code }, third), (e) => code(e) === Code.FailedPrecondition && preconditionType(e) === "INVITE_USED");
  await assert.rejects(api.groupInvites.redeemGroupInvite({ code: "no-such-code" }, third), (e) => code(e) === Code.NotFound);
  await assert.rejects(api.groupInvites.redeemGroupInvite({ code: invite.code }), (e) => code(e) === Code.Unauthenticated);
  await assert.rejects(api.groupInvites.redeemGroupInvite({ code: "" }, third), (e) => badFields(e).includes("code"));

  const multi = await api.groupInvites.createGroupInvite({ parent: team, groupInvite: { roleUid: VIEWER, ttl: { seconds: 3600n } } }, owner);
  await api.groupInvites.redeemGroupInvite({ code: multi.code }, third);
  const again = await api.groupInvites.redeemGroupInvite({ code: multi.code }, third);
  assert.ok(again.roleBindingUid, "redeeming twice keeps the one binding");
  await api.store.db.updateTable("group_invites").set({ expire_time: Date.now() - 1 }).where("uid", "=", multi.uid).execute();
  await assert.rejects(api.groupInvites.redeemGroupInvite({ code: multi.code }, newcomer), (e) => code(e) === Code.FailedPrecondition && preconditionType(e) === "INVITE_EXPIRED");

  await assert.rejects(api.groupInvites.deleteGroupInvite({ uid: multi.uid }, newcomer), (e) => code(e) === Code.PermissionDenied);
  await api.groupInvites.deleteGroupInvite({ uid: multi.uid }, owner);
  await assert.rejects(api.groupInvites.getGroupInvite({ uid: multi.uid }, owner), (e) => code(e) === Code.NotFound);
});

test("group invites: creating one needs every capability of its role; ttl and role are checked", async () => {
  const owner = api.as(api.ownerToken);
  const team = await folder("invite-power");
  const editorId = await api.identityWith(api.org, "editor", team);
  const editor = api.as(editorId);
  // An editor lacks CAP_IAM_GROUP_INVITES_CREATE; give it through a custom role to see the role check itself.
  const now = Date.now();
  const inviter = newChildUid(team);
  await api.store.db.insertInto("roles").values({ uid: inviter, group_uid: team, name: "inviter", description: "", built_in: 0, create_time: now, update_time: now }).execute();
  await api.store.db
    .insertInto("role_capabilities")
    .values(["CAP_IAM_GROUP_INVITES_CREATE", "CAP_IAM_GROUPS_LIST"].map((capability) => ({ role_uid: inviter, capability })))
    .execute();
  await api.store.db.insertInto("role_bindings").values({ uid: newChildUid(team), group_uid: team, identity_uid: JSON.parse(Buffer.from(editorId.split(".")[1], "base64url").toString()).sub, role_uid: inviter, create_time: now }).execute();

  assert.ok((await api.groupInvites.createGroupInvite({ parent: team, groupInvite: { roleUid: EDITOR } }, editor)).code, "an editor may invite editors");
  await assert.rejects(api.groupInvites.createGroupInvite({ parent: team, groupInvite: { roleUid: OWNER } }, editor), (e) => code(e) === Code.PermissionDenied);
  await assert.rejects(api.groupInvites.createGroupInvite({ parent: api.org, groupInvite: { roleUid: VIEWER } }, editor), (e) => code(e) === Code.PermissionDenied);
  await assert.rejects(api.groupInvites.createGroupInvite({ parent: team, groupInvite: { roleUid: newChildUid(api.org) } }, owner), (e) => code(e) === Code.NotFound);
  const sibling = await folder("invite-sibling");
  await assert.rejects(api.groupInvites.createGroupInvite({ parent: sibling, groupInvite: { roleUid: inviter } }, owner), (e) => code(e) === Code.NotFound, "a role of another subtree");
  await assert.rejects(
    api.groupInvites.createGroupInvite({ parent: team, groupInvite: { roleUid: "bad", email: "not-an-email", ttl: { seconds: BigInt(31 * 24 * 3600) } } }, owner),
    (e) => {
      assert.deepEqual(badFields(e).sort(), ["group_invite.email", "group_invite.role_uid", "group_invite.ttl"]);
      return true;
    },
  );
});

test("external group role mappings: under a provider, role checked, provider with mappings not deletable", async () => {
  const owner = api.as(api.ownerToken);
  const team = await folder("mapping-team");
  const viewer = api.as(await api.identityWith(api.org, "viewer", team));
  const provider = await api.identityProviders.createIdentityProvider({ parent: team, identityProvider: idp("corp") }, owner);
  const made = await api.externalGroupRoleMappings.createExternalGroupRoleMapping({ parent: provider.uid, externalGroupRoleMapping: { externalGroup: "admins", roleUid: OWNER } }, owner);
  assert.match(made.uid, new RegExp(`^${provider.uid}/[0-9a-f]{16}$`));
  await assert.rejects(
    api.externalGroupRoleMappings.createExternalGroupRoleMapping({ parent: provider.uid, externalGroupRoleMapping: { externalGroup: "admins", roleUid: OWNER } }, owner),
    (e) => code(e) === Code.AlreadyExists,
  );
  await assert.rejects(
    api.externalGroupRoleMappings.createExternalGroupRoleMapping({ parent: team, externalGroupRoleMapping: { externalGroup: "x", roleUid: OWNER } }, owner),
    (e) => code(e) === Code.NotFound,
    "a group uid is no provider",
  );
  await assert.rejects(
    api.externalGroupRoleMappings.createExternalGroupRoleMapping({ parent: api.org, externalGroupRoleMapping: { externalGroup: "x", roleUid: OWNER } }, owner),
    (e) => code(e) === Code.InvalidArgument,
  );
  await assert.rejects(
    api.externalGroupRoleMappings.createExternalGroupRoleMapping({ parent: provider.uid, externalGroupRoleMapping: { externalGroup: "", roleUid: "x" } }, owner),
    (e) => badFields(e).sort().join() === "external_group_role_mapping.external_group,external_group_role_mapping.role_uid",
  );
  assert.equal((await api.externalGroupRoleMappings.getExternalGroupRoleMapping({ uid: made.uid }, viewer)).externalGroup, "admins");
  await assert.rejects(api.externalGroupRoleMappings.deleteExternalGroupRoleMapping({ uid: made.uid }, viewer), (e) => code(e) === Code.PermissionDenied);
  const listed = await api.externalGroupRoleMappings.listExternalGroupRoleMappings({ uidp: { childrenOf: provider.uid } }, viewer);
  assert.deepEqual(listed.externalGroupRoleMappings.map((m) => m.uid), [made.uid]);
  const patched = await api.externalGroupRoleMappings.updateExternalGroupRoleMapping({ externalGroupRoleMapping: { uid: made.uid, roleUid: VIEWER } }, owner);
  assert.equal(patched.roleUid, VIEWER);
  assert.equal(patched.externalGroup, "admins");

  await assert.rejects(api.identityProviders.deleteIdentityProvider({ uid: provider.uid }, owner), (e) => preconditionType(e) === "RESOURCE_NOT_EMPTY");
  await api.externalGroupRoleMappings.deleteExternalGroupRoleMapping({ uid: made.uid }, owner);
  await api.identityProviders.deleteIdentityProvider({ uid: provider.uid }, owner);
});

test("terms: acceptances are recorded by the caller and listed with those of ancestors", async () => {
  const owner = api.as(api.ownerToken);
  const team = await folder("terms-team");
  const sub = await folder("terms-sub", team);
  const viewer = api.as(await api.identityWith(api.org, "viewer", sub));

  const atOrg = await api.terms.acceptTerms({ group: api.org, docIds: ["tos-2026"] }, owner);
  assert.equal(atOrg.acceptances[0].orgUid, api.org);
  assert.match(atOrg.acceptances[0].acceptedBy, new RegExp(`^${api.org}/`));
  await api.terms.acceptTerms({ group: sub, docIds: ["aup-1", "dpa-2"] }, owner);
  const again = await api.terms.acceptTerms({ group: api.org, docIds: ["tos-2026"] }, owner);
  assert.equal(again.acceptances[0].uid, atOrg.acceptances[0].uid, "accepting again keeps the first record");

  const first = await api.terms.listTerms({ group: sub, pageSize: 2, orderBy: "doc_id" }, viewer);
  assert.equal(first.totalCount, 3n);
  const rest = await api.terms.listTerms({ group: sub, pageSize: 2, orderBy: "doc_id", pageToken: first.nextPageToken }, viewer);
  assert.deepEqual([...first.acceptances, ...rest.acceptances].map((a) => a.docId), ["aup-1", "dpa-2", "tos-2026"]);
  assert.equal(rest.nextPageToken, "");
  const team1 = await api.terms.listTerms({ group: team }, owner);
  assert.deepEqual(team1.acceptances.map((a) => a.docId), ["tos-2026"], "a parent does not see its children's acceptances");

  await assert.rejects(api.terms.listTerms({ group: team }, viewer), (e) => code(e) === Code.PermissionDenied);
  await assert.rejects(api.terms.acceptTerms({ group: sub, docIds: ["x"] }, viewer), (e) => code(e) === Code.PermissionDenied);
  await assert.rejects(api.terms.listTerms({ group: newChildUid(sub) }, owner), (e) => code(e) === Code.NotFound);
  await assert.rejects(api.terms.acceptTerms({ group: sub, docIds: ["ok", "ok", "bad id"] }, owner), (e) => badFields(e).join() === "doc_ids[1],doc_ids[2]");
  await assert.rejects(api.terms.acceptTerms({ group: sub, docIds: [] }, owner), (e) => badFields(e).join() === "doc_ids");
  await assert.rejects(api.groups.deleteGroup({ uid: sub }, owner), (e) => preconditionType(e) === "RESOURCE_NOT_EMPTY");
});
