import assert from "node:assert/strict";
import { openStoredSecret } from "../support/sealed-secrets.js";
import { after, before, test } from "node:test";
import { Code, ConnectError } from "@connectrpc/connect";
import { PreconditionFailureSchema, BadRequestSchema } from "../../gen/google/rpc/error_details_pb.js";
import { newChildUid } from "../../src/aip/uidp.js";
import { builtInRole } from "../../src/access/capabilities.js";
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

const oidc = { issuer: "https://issuer.example.com", clientId: "client", clientSecret: "s3cret", additionalScopes: ["email", "groups"], groupsClaim: "groups" };
const idp = (name: string, defaultRole = "") => ({ name, defaultRole, configuration: { case: "oidc" as const, value: oidc } });
const oidcOf = (p: { configuration: { case?: string; value?: unknown } }) => {
  assert.equal(p.configuration.case, "oidc");
  return p.configuration.value as typeof oidc;
};

test("identity providers: CRUD, the client secret is never returned, viewer vs owner vs stranger", async () => {
  const owner = api.as(api.ownerToken);
  const team = await folder("idp-team");
  const other = await folder("idp-other");
  const viewer = api.as(await api.identityWith(api.org, "viewer", team));
  const stranger = api.as(await api.identityWith(api.org, "viewer", other));

  const made = await api.identityProviders.createIdentityProvider({ parent: team, identityProvider: idp("corp", VIEWER) }, owner);
  assert.match(made.uid, new RegExp(`^${team}/[0-9a-f]{16}$`));
  assert.equal(oidcOf(made).clientSecret, "");
  assert.deepEqual(oidcOf(made).additionalScopes, ["email", "groups"]);
  assert.equal(made.defaultRole, VIEWER);

  const read = await api.identityProviders.getIdentityProvider({ uid: made.uid }, viewer);
  assert.equal(oidcOf(read).clientSecret, "");
  assert.equal(oidcOf(read).issuer, "https://issuer.example.com");
  await assert.rejects(api.identityProviders.getIdentityProvider({ uid: made.uid }, stranger), (e) => code(e) === Code.PermissionDenied);
  await assert.rejects(api.identityProviders.getIdentityProvider({ uid: newChildUid(other) }, stranger), (e) => code(e) === Code.NotFound);
  await assert.rejects(api.identityProviders.getIdentityProvider({ uid: newChildUid(team) }, stranger), (e) => code(e) === Code.PermissionDenied, "denied before existence");
  await assert.rejects(api.identityProviders.createIdentityProvider({ parent: team, identityProvider: idp("no") }, viewer), (e) => code(e) === Code.PermissionDenied);

  const listed = await api.identityProviders.listIdentityProviders({}, viewer);
  assert.deepEqual(listed.identityProviders.map((p) => p.uid), [made.uid]);
  assert.equal(listed.totalCount, 1n);
  assert.equal(oidcOf(listed.identityProviders[0]).clientSecret, "");
  assert.equal((await api.identityProviders.listIdentityProviders({}, stranger)).totalCount, 0n);

  await assert.rejects(api.identityProviders.createIdentityProvider({ parent: team, identityProvider: idp("corp") }, owner), (e) => code(e) === Code.AlreadyExists);

  const patched = await api.identityProviders.updateIdentityProvider({ identityProvider: { uid: made.uid, description: "d" } }, owner);
  assert.equal(patched.description, "d");
  assert.equal(oidcOf(patched).clientSecret, "");
  assert.equal(oidcOf(patched).issuer, "https://issuer.example.com");
  const stored = await api.store.db.selectFrom("identity_providers").select("client_secret").where("uid", "=", made.uid).executeTakeFirstOrThrow();
  assert.equal(await openStoredSecret(api.store.db, stored.client_secret), "s3cret", "an update without a secret keeps it");
  const rotate = { uid: made.uid, configuration: { case: "oidc" as const, value: { clientSecret: "new", issuer: "https://ignored.example.com" } } };
  const afterRotate = await api.identityProviders.updateIdentityProvider({ identityProvider: rotate, updateMask: { paths: ["oidc.client_secret"] } }, owner);
  assert.equal(oidcOf(afterRotate).issuer, "https://issuer.example.com", "a path inside oidc changes only that field");
  const rotated = await api.store.db.selectFrom("identity_providers").select("client_secret").where("uid", "=", made.uid).executeTakeFirstOrThrow();
  assert.equal(await openStoredSecret(api.store.db, rotated.client_secret), "new");
  const unmasked = await api.identityProviders.updateIdentityProvider(
    { identityProvider: { uid: made.uid, configuration: { case: "oidc", value: { groupsClaim: "teams" } } } },
    owner,
  );
  assert.deepEqual([oidcOf(unmasked).groupsClaim, oidcOf(unmasked).clientId], ["teams", "client"], "no mask: only the oidc fields given change");
  await assert.rejects(
    api.identityProviders.updateIdentityProvider({ identityProvider: { uid: made.uid }, updateMask: { paths: ["oidc"] } }, owner),
    (e) => code(e) === Code.InvalidArgument && badFields(e).includes("identity_provider.oidc"),
    "naming oidc whole with none given clears it, which is refused",
  );
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
        identityProvider: {
          name: "x".repeat(129),
          defaultRole: "nope",
          configuration: { case: "oidc", value: { issuer: "http://insecure.example.com", clientId: "", additionalScopes: ["bad scope"] } },
        },
      },
      owner,
    ),
    (e) => {
      assert.equal(code(e), Code.InvalidArgument);
      assert.deepEqual(badFields(e).sort(), [
        "identity_provider.default_role",
        "identity_provider.name",
        "identity_provider.oidc.additional_scopes[0]",
        "identity_provider.oidc.client_id",
        "identity_provider.oidc.client_secret",
        "identity_provider.oidc.issuer",
      ]);
      return true;
    },
  );
  await assert.rejects(api.identityProviders.getIdentityProvider({ uid: "ABC" }, owner), (e) => code(e) === Code.InvalidArgument);
  await assert.rejects(
    api.identityProviders.createIdentityProvider(
      { parent: api.org, identityProvider: { name: "q", configuration: { case: "oidc", value: { ...oidc, issuer: "https://x.example.com/?a=b" } } } },
      owner,
    ),
    (e) => badFields(e).includes("identity_provider.oidc.issuer"),
  );
  await assert.rejects(api.identityProviders.createIdentityProvider({ parent: api.org, identityProvider: { name: "none" } }, owner), (e) =>
    badFields(e).includes("identity_provider.oidc"),
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
        amazon: { account: "123456789012" },
        google: { projectId: "my-project-1", projectNumber: "987654321" },
        azure: { tenantId: "0f0e0d0c-0b0a-0908-0706-050403020100", clientIds: { ingester: "00000000-0000-0000-0000-000000000001" } },
        github: { appInstallations: { "7": { installations: [{ installationId: 42n, name: "acme" }, { installationId: 43n }] } } },
      },
    },
    owner,
  );
  assert.equal(made.uid, team);
  assert.deepEqual(
    made.github?.appInstallations["7"].installations.map((i) => [i.installationId, i.name]),
    [
      [42n, "acme"],
      [43n, ""],
    ],
  );
  assert.equal(made.azure?.clientIds.ingester, "00000000-0000-0000-0000-000000000001");
  await assert.rejects(api.accountAssociations.createAccountAssociation({ parent: team, accountAssociation: {} }, owner), (e) => code(e) === Code.AlreadyExists);
  assert.equal((await api.accountAssociations.getAccountAssociation({ uid: team }, viewer)).amazon?.account, "123456789012");
  await assert.rejects(api.accountAssociations.getAccountAssociation({ uid: api.org }, viewer), (e) => code(e) === Code.PermissionDenied);
  await assert.rejects(api.accountAssociations.getAccountAssociation({ uid: api.org }, owner), (e) => code(e) === Code.NotFound);
  await assert.rejects(api.accountAssociations.createAccountAssociation({ parent: newChildUid(team), accountAssociation: {} }, owner), (e) => code(e) === Code.NotFound);

  const listed = await api.accountAssociations.listAccountAssociations({}, viewer);
  assert.deepEqual(listed.accountAssociations.map((a) => a.uid), [team]);

  await assert.rejects(
    api.accountAssociations.updateAccountAssociation(
      {
        accountAssociation: {
          uid: team,
          amazon: { account: "12" },
          google: { projectId: "Bad_Project" },
          azure: { tenantId: "0f0e0d0c-0b0a-0908-0706-050403020100", clientIds: { "bad name": "nope" } },
          github: { appInstallations: { "7": { installations: [{ installationId: 1n }, { installationId: 1n }, { installationId: 0n }] } } },
        },
      },
      owner,
    ),
    (e) => {
      assert.deepEqual(badFields(e).sort(), [
        "account_association.amazon.account",
        'account_association.azure.client_ids["bad name"]',
        'account_association.azure.client_ids["bad name"]',
        "account_association.github.app_installations[7].installations[1].installation_id",
        "account_association.github.app_installations[7].installations[2].installation_id",
        "account_association.google.project_id",
      ]);
      return true;
    },
  );
  const patched = await api.accountAssociations.updateAccountAssociation({ accountAssociation: { uid: team, description: "d" }, updateMask: { paths: ["description"] } }, owner);
  assert.equal(patched.description, "d");
  assert.equal(patched.amazon?.account, "123456789012");
  const moved = await api.accountAssociations.updateAccountAssociation(
    { accountAssociation: { uid: team, google: { projectNumber: "1" } }, updateMask: { paths: ["google.project_number"] } },
    owner,
  );
  assert.deepEqual([moved.google?.projectId, moved.google?.projectNumber], ["my-project-1", "1"], "a path inside google changes only that field");
  const dropped = await api.accountAssociations.updateAccountAssociation({ accountAssociation: { uid: team }, updateMask: { paths: ["azure"] } }, owner);
  assert.equal(dropped.azure, undefined, "naming a cloud whole with none given removes it");

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

  // An email-bound invite admits only a person whose provider verified the address (test/e2e/login.test.ts); this one admits any holder of the code.
  const invite = await api.groupInvites.createGroupInvite({ parent: team, groupInvite: { roleUid: VIEWER, singleUse: true } }, owner);
  assert.match(invite.code, /^[A-Za-z0-9_-]{32}$/);
  assert.match(invite.uid, new RegExp(`^${team}/[0-9a-f]{16}$`));
  assert.equal(invite.role?.name, "viewer", "the role is hydrated");
  assert.equal(invite.role?.capabilities.length, builtInRole("viewer").capabilities.length);
  assert.equal((await api.groupInvites.listGroupInvites({ uidp: { childrenOf: team } }, owner)).groupInvites[0].role?.uid, VIEWER);
  const week = Number(invite.expirationTime!.seconds) - Number(invite.createTime!.seconds);
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
    .values(["CAP_IAM_GROUP_INVITES_CREATE", "CAP_IAM_GROUP_INVITES_UPDATE", "CAP_IAM_GROUPS_LIST"].map((capability) => ({ role_uid: inviter, capability })))
    .execute();
  await api.store.db.insertInto("role_bindings").values({ uid: newChildUid(team), group_uid: team, identity_uid: JSON.parse(Buffer.from(editorId.split(".")[1], "base64url").toString()).sub, role_uid: inviter, create_time: now }).execute();

  const invited = await api.groupInvites.createGroupInvite({ parent: team, groupInvite: { roleUid: EDITOR } }, editor);
  assert.ok(invited.code, "an editor may invite editors");
  await assert.rejects(
    api.groupInvites.updateGroupInvite({ groupInvite: { uid: invited.uid, roleUid: OWNER } }, editor),
    (e) => code(e) === Code.PermissionDenied,
    "nor may an update make an invite grant more than its caller holds",
  );
  assert.equal((await api.groupInvites.updateGroupInvite({ groupInvite: { uid: invited.uid, roleUid: VIEWER } }, editor)).roleUid, VIEWER);
  await assert.rejects(api.groupInvites.createGroupInvite({ parent: team, groupInvite: { roleUid: OWNER } }, editor), (e) => code(e) === Code.PermissionDenied);
  await assert.rejects(api.groupInvites.createGroupInvite({ parent: api.org, groupInvite: { roleUid: VIEWER } }, editor), (e) => code(e) === Code.PermissionDenied);
  await assert.rejects(api.groupInvites.createGroupInvite({ parent: team, groupInvite: { roleUid: newChildUid(api.org) } }, owner), (e) => code(e) === Code.NotFound);
  const sibling = await folder("invite-sibling");
  await assert.rejects(api.groupInvites.createGroupInvite({ parent: sibling, groupInvite: { roleUid: inviter } }, owner), (e) => code(e) === Code.FailedPrecondition, "a role of another subtree is out of scope, as for bindings");
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
  const made = await api.externalGroupRoleMappings.createExternalGroupRoleMapping({ parent: provider.uid, externalGroupRoleMapping: { externalGroupId: "admins", roleUid: OWNER } }, owner);
  assert.match(made.uid, new RegExp(`^${provider.uid}/[0-9a-f]{16}$`));
  await assert.rejects(
    api.externalGroupRoleMappings.createExternalGroupRoleMapping({ parent: provider.uid, externalGroupRoleMapping: { externalGroupId: "admins", roleUid: OWNER } }, owner),
    (e) => code(e) === Code.AlreadyExists,
  );
  await assert.rejects(
    api.externalGroupRoleMappings.createExternalGroupRoleMapping({ parent: team, externalGroupRoleMapping: { externalGroupId: "x", roleUid: OWNER } }, owner),
    (e) => code(e) === Code.NotFound,
    "a group uid is no provider",
  );
  await assert.rejects(
    api.externalGroupRoleMappings.createExternalGroupRoleMapping({ parent: api.org, externalGroupRoleMapping: { externalGroupId: "x", roleUid: OWNER } }, owner),
    (e) => code(e) === Code.InvalidArgument,
  );
  await assert.rejects(
    api.externalGroupRoleMappings.createExternalGroupRoleMapping({ parent: provider.uid, externalGroupRoleMapping: { externalGroupId: "", roleUid: "x" } }, owner),
    (e) => badFields(e).sort().join() === "external_group_role_mapping.external_group_id,external_group_role_mapping.role_uid",
  );
  assert.equal((await api.externalGroupRoleMappings.getExternalGroupRoleMapping({ uid: made.uid }, viewer)).externalGroupId, "admins");
  await assert.rejects(api.externalGroupRoleMappings.deleteExternalGroupRoleMapping({ uid: made.uid }, viewer), (e) => code(e) === Code.PermissionDenied);
  const listed = await api.externalGroupRoleMappings.listExternalGroupRoleMappings({ uidp: { childrenOf: provider.uid } }, viewer);
  assert.deepEqual(listed.externalGroupRoleMappings.map((m) => m.uid), [made.uid]);
  assert.equal(listed.externalGroupRoleMappings[0].identityProviderUid, provider.uid);
  const byProvider = await api.externalGroupRoleMappings.listExternalGroupRoleMappings({ identityProviderUid: provider.uid, externalGroupId: "admins" }, viewer);
  assert.deepEqual(byProvider.externalGroupRoleMappings.map((m) => m.uid), [made.uid]);
  const otherGroup = await api.externalGroupRoleMappings.listExternalGroupRoleMappings({ identityProviderUid: provider.uid, externalGroupId: "nobody" }, viewer);
  assert.equal(otherGroup.totalCount, 0n);
  const patched = await api.externalGroupRoleMappings.updateExternalGroupRoleMapping({ externalGroupRoleMapping: { uid: made.uid, roleUid: VIEWER } }, owner);
  assert.equal(patched.roleUid, VIEWER);
  assert.equal(patched.externalGroupId, "admins");

  await assert.rejects(api.identityProviders.deleteIdentityProvider({ uid: provider.uid }, owner), (e) => preconditionType(e) === "RESOURCE_NOT_EMPTY");
  await api.externalGroupRoleMappings.deleteExternalGroupRoleMapping({ uid: made.uid }, owner);
  await api.identityProviders.deleteIdentityProvider({ uid: provider.uid }, owner);
});

test("terms: acceptances are recorded by the caller and listed with those of ancestors", async () => {
  const owner = api.as(api.ownerToken);
  const team = await folder("terms-team");
  const sub = await folder("terms-sub", team);
  const viewer = api.as(await api.identityWith(api.org, "viewer", sub));

  const atOrg = await api.terms.acceptTerms({ group: api.org, documentIds: ["tos-2026"] }, owner);
  assert.equal(atOrg.termsAcceptances[0].orgUid, api.org);
  assert.match(atOrg.termsAcceptances[0].acceptedBy, new RegExp(`^${api.org}/`));
  await api.terms.acceptTerms({ group: sub, documentIds: ["aup-1", "dpa-2"] }, owner);
  const again = await api.terms.acceptTerms({ group: api.org, documentIds: ["tos-2026"] }, owner);
  assert.equal(again.termsAcceptances[0].uid, atOrg.termsAcceptances[0].uid, "accepting again keeps the first record");

  const first = await api.terms.listTermsAcceptances({ group: sub, pageSize: 2, orderBy: "doc_id" }, viewer);
  assert.equal(first.totalCount, 3n);
  const rest = await api.terms.listTermsAcceptances({ group: sub, pageSize: 2, orderBy: "doc_id", pageToken: first.nextPageToken }, viewer);
  assert.deepEqual([...first.termsAcceptances, ...rest.termsAcceptances].map((a) => a.docId), ["aup-1", "dpa-2", "tos-2026"]);
  assert.equal(rest.nextPageToken, "");
  const team1 = await api.terms.listTermsAcceptances({ group: team }, owner);
  assert.deepEqual(team1.termsAcceptances.map((a) => a.docId), ["tos-2026"], "a parent does not see its children's acceptances");

  await assert.rejects(api.terms.listTermsAcceptances({ group: team }, viewer), (e) => code(e) === Code.PermissionDenied);
  await assert.rejects(api.terms.acceptTerms({ group: sub, documentIds: ["x"] }, viewer), (e) => code(e) === Code.PermissionDenied);
  await assert.rejects(api.terms.listTermsAcceptances({ group: newChildUid(sub) }, owner), (e) => code(e) === Code.NotFound);
  await assert.rejects(api.terms.acceptTerms({ group: sub, documentIds: ["ok", "ok", "bad id"] }, owner), (e) => badFields(e).join() === "document_ids[1],document_ids[2]");
  await assert.rejects(api.terms.acceptTerms({ group: sub, documentIds: [] }, owner), (e) => badFields(e).join() === "document_ids");
  await assert.rejects(api.groups.deleteGroup({ uid: sub }, owner), (e) => preconditionType(e) === "RESOURCE_NOT_EMPTY");
});
