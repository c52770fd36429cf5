import assert from "node:assert/strict";
import { openStoredSecret } from "../support/sealed-secrets.js";
import { test } from "node:test";
import type { JsonObject } from "@bufbuild/protobuf";
import { AccountAssociationsService } from "../../gen/platform/iam/v2/account_associations_service_pb.js";
import { ExternalGroupRoleMappingsService } from "../../gen/platform/iam/v2/external_group_role_mappings_service_pb.js";
import { GroupInvitesService } from "../../gen/platform/iam/v2/group_invites_service_pb.js";
import { GroupsService } from "../../gen/platform/iam/v2/groups_service_pb.js";
import { IdentitiesService } from "../../gen/platform/iam/v2/identities_service_pb.js";
import { IdentityProvidersService } from "../../gen/platform/iam/v2/identity_providers_service_pb.js";
import { RoleBindingsService } from "../../gen/platform/iam/v2/role_bindings_service_pb.js";
import { TermsService } from "../../gen/platform/iam/v2/terms_service_pb.js";
import { newChildUid } from "../../src/aip/uidp.js";
import { builtInRole } from "../../src/access/capabilities.js";
import { insertIdentity } from "../../src/domains/iam/store/identities.js";
import { serveOverWires } from "../support/over-wires.js";
import { detailOf, methodOf, reasonOf, type Outcome } from "../support/wires.js";

const served = serveOverWires();
const { server } = served;

/** A new identity of the organization with no binding, and its token. */
async function newcomer(): Promise<string> {
  const uid = newChildUid(server().org.uid);
  const now = Date.now();
  await insertIdentity(server().store.db, { uid, group_uid: server().org.uid, name: "newcomer", description: "", claim_match: "", static_keys: "", last_seen_time: null, create_time: now, update_time: now });
  return (await server().server.tokens.issue({ subject: uid, audience: "http://api.test" })).token;
}

/** How many events of a `deleted` type are about `subject`. */
async function deletedEvents(subject: string): Promise<number> {
  const rows = await server().store.db.selectFrom("events").select("type").where("subject", "=", subject).execute();
  return rows.filter((r) => r.type.endsWith(".deleted.v1")).length;
}

served.describeOverWires("IAM extras", ({ wire, wireName }) => {
  const call = (service: Parameters<typeof methodOf>[0], name: string, request: JsonObject, rest: { method: string; path: string; body?: JsonObject }, token = server().ownerToken) =>
    wire().call(methodOf(service, name), request, rest, token);
  const folder = async (name: string) => {
    const out = await call(GroupsService, "CreateGroup", { parent: server().org.uid, group: { name } }, { method: "POST", path: `/iam/v2/groups/${server().org.uid}`, body: { name } });
    assert.equal(out.code, 0, out.message);
    return out.body!.uid as string;
  };

  test("an identity provider has the hosted shape (oidc nested, defaultRole) and never shows its client secret", async () => {
    const group = await folder(`idp ${wireName}`);
    const viewer = builtInRole("viewer").uid;
    const body = {
      name: "corp",
      defaultRole: viewer,
      oidc: { issuer: "https://login.example.com", clientId: "cid", clientSecret: "hidden", additionalScopes: ["email"], groupsClaim: "groups" },
    };
    const made = await call(IdentityProvidersService, "CreateIdentityProvider", { parent: group, identityProvider: body }, { method: "POST", path: `/iam/v2/identityProviders/${group}`, body });
    assert.equal(made.code, 0, made.message);
    const uid = made.body!.uid as string;
    const expected = { uid, name: "corp", defaultRole: viewer, oidc: { issuer: "https://login.example.com", clientId: "cid", additionalScopes: ["email"], groupsClaim: "groups" } };
    const shape = (b: JsonObject | undefined) => ({ uid: b?.uid, name: b?.name, defaultRole: b?.defaultRole, oidc: b?.oidc });
    assert.deepEqual(shape(made.body), expected);
    const read = await call(IdentityProvidersService, "GetIdentityProvider", { uid }, { method: "GET", path: `/iam/v2/identityProviders/${uid}` });
    assert.equal(read.code, 0, read.message);
    assert.deepEqual(shape(read.body), expected);

    const rotate = { oidc: { clientSecret: "rotated", clientId: "ignored" } };
    const patched = await call(
      IdentityProvidersService,
      "UpdateIdentityProvider",
      { identityProvider: { uid, ...rotate }, updateMask: "oidc.clientSecret" },
      { method: "PATCH", path: `/iam/v2/identityProviders/${uid}?updateMask=oidc.clientSecret`, body: rotate },
    );
    assert.equal(patched.code, 0, patched.message);
    assert.deepEqual(shape(patched.body), expected, "only the secret changed, and it is not shown");
    const stored = await server().store.db.selectFrom("identity_providers").select("client_secret").where("uid", "=", uid).executeTakeFirstOrThrow();
    assert.match(stored.client_secret, /^sealed:v1:/);
    assert.equal(await openStoredSecret(server().store.db, stored.client_secret), "rotated");

    // Without a mask, only the fields inside `oidc` that the body sets change (REST infers `oidc.groups_claim`).
    const claim = { oidc: { groupsClaim: "teams" } };
    const merged = await call(IdentityProvidersService, "UpdateIdentityProvider", { identityProvider: { uid, ...claim } }, { method: "PATCH", path: `/iam/v2/identityProviders/${uid}`, body: claim });
    assert.equal(merged.code, 0, merged.message);
    assert.deepEqual(merged.body?.oidc, { ...expected.oidc, groupsClaim: "teams" });

    const bad = { name: "bad", oidc: { issuer: "ftp://x", clientId: "c" } };
    const refused = await call(IdentityProvidersService, "CreateIdentityProvider", { parent: group, identityProvider: bad }, { method: "POST", path: `/iam/v2/identityProviders/${group}`, body: bad });
    assert.equal(refused.code, 3);
    assert.deepEqual((detailOf(refused, "BadRequest")?.fieldViolations as JsonObject[]).map((v) => v.field).sort(), [
      "identity_provider.oidc.client_secret",
      "identity_provider.oidc.issuer",
    ]);
    if (wireName === "rest") assert.equal(refused.httpStatus, 400);
  });

  test("deleting a role binding, group invite or account association is idempotent (AIP-135): again, or never there, is an empty 200 without an event", async () => {
    const group = await folder(`deletes ${wireName}`);
    const viewer = builtInRole("viewer").uid;
    const identity = await call(IdentitiesService, "CreateIdentity", { parent: group, identity: { name: "bound" } }, { method: "POST", path: `/iam/v2/identities/${group}`, body: { name: "bound" } });
    assert.equal(identity.code, 0, identity.message);
    const created = async (out: Promise<Outcome>) => {
      const o = await out;
      assert.equal(o.code, 0, o.message);
      return o.body!.uid as string;
    };
    const binding = { identityUid: identity.body!.uid as string, roleUid: viewer };
    const invite = { roleUid: viewer };
    const association = { name: "cloud", amazon: { account: "123456789012" } };
    const kinds = [
      {
        name: "role binding",
        create: () => created(call(RoleBindingsService, "CreateRoleBinding", { parent: group, roleBinding: binding }, { method: "POST", path: `/iam/v2/roleBindings/${group}`, body: binding })),
        missing: newChildUid(group),
        remove: (uid: string, token?: string) => call(RoleBindingsService, "DeleteRoleBinding", { uid }, { method: "DELETE", path: `/iam/v2/roleBindings/${uid}` }, token),
      },
      {
        name: "group invite",
        create: () => created(call(GroupInvitesService, "CreateGroupInvite", { parent: group, groupInvite: invite }, { method: "POST", path: `/iam/v2/groupInvites/${group}`, body: invite })),
        missing: newChildUid(group),
        remove: (uid: string, token?: string) => call(GroupInvitesService, "DeleteGroupInvite", { uid }, { method: "DELETE", path: `/iam/v2/groupInvites/${uid}` }, token),
      },
      {
        name: "account association",
        create: () =>
          created(call(AccountAssociationsService, "CreateAccountAssociation", { parent: group, accountAssociation: association }, { method: "POST", path: `/iam/v2/accountAssociations/${group}`, body: association })),
        // A folder that never existed (an association's uid is its group's).
        missing: newChildUid(group),
        remove: (uid: string, token?: string) => call(AccountAssociationsService, "DeleteAccountAssociation", { uid }, { method: "DELETE", path: `/iam/v2/accountAssociations/${uid}` }, token),
      },
    ];
    const stranger = await newcomer();
    for (const kind of kinds) {
      const uid = await kind.create();
      const denied = await kind.remove(uid, stranger);
      assert.equal(denied.code, 7, `${kind.name}: a caller without the capability is refused`);
      assert.equal((await kind.remove(kind.missing, stranger)).code, 7, `${kind.name}: refused whether or not it exists`);
      for (const attempt of ["first", "second"]) {
        const out = await kind.remove(uid);
        assert.equal(out.code, 0, `${kind.name}, ${attempt} delete: ${out.message}`);
        assert.deepEqual(out.body, {});
        if (wireName === "rest") assert.equal(out.httpStatus, 200);
      }
      assert.equal(await deletedEvents(uid), 1, `${kind.name}: one deleted event, from the delete that deleted`);
      const never = await kind.remove(kind.missing);
      assert.equal(never.code, 0, `${kind.name} never there: ${never.message}`);
      assert.deepEqual(never.body, {});
      assert.equal(await deletedEvents(kind.missing), 0, `${kind.name}: no event for a delete that deleted nothing`);
      const malformed = await kind.remove("not-a-uid");
      assert.equal(malformed.code, 3, `${kind.name}: a malformed uid is still INVALID_ARGUMENT`);
    }
  });

  test("an external group role mapping names its provider and external group id (hosted names)", async () => {
    const group = await folder(`mapping ${wireName}`);
    const idp = { name: "sso", oidc: { issuer: "https://sso.example.com", clientId: "c", clientSecret: "s" } };
    const provider = await call(IdentityProvidersService, "CreateIdentityProvider", { parent: group, identityProvider: idp }, { method: "POST", path: `/iam/v2/identityProviders/${group}`, body: idp });
    assert.equal(provider.code, 0, provider.message);
    const providerUid = provider.body!.uid as string;
    const body = { externalGroupId: "admins", roleUid: builtInRole("viewer").uid };
    const made = await call(
      ExternalGroupRoleMappingsService,
      "CreateExternalGroupRoleMapping",
      { parent: providerUid, externalGroupRoleMapping: body },
      { method: "POST", path: `/iam/v2/externalGroupRoleMappings/${providerUid}`, body },
    );
    assert.equal(made.code, 0, made.message);
    assert.equal(made.body?.identityProviderUid, providerUid);
    assert.equal(made.body?.externalGroupId, "admins");
    const listed = await call(
      ExternalGroupRoleMappingsService,
      "ListExternalGroupRoleMappings",
      { identityProviderUid: providerUid, externalGroupId: "admins" },
      { method: "GET", path: `/iam/v2/externalGroupRoleMappings?identityProviderUid=${providerUid}&externalGroupId=admins` },
    );
    assert.equal(listed.code, 0, listed.message);
    assert.deepEqual((listed.body?.externalGroupRoleMappings as JsonObject[]).map((m) => m.uid), [made.body!.uid]);
  });

  test("an invite code is redeemed once by another identity, which can then read the group", async () => {
    const group = await folder(`invite ${wireName}`);
    const body = { roleUid: builtInRole("viewer").uid, singleUse: true, ttl: "3600s" };
    const made = await call(GroupInvitesService, "CreateGroupInvite", { parent: group, groupInvite: body }, { method: "POST", path: `/iam/v2/groupInvites/${group}`, body });
    assert.equal(made.code, 0, made.message);
    const lifetime = Date.parse(made.body!.expirationTime as string) - Date.parse(made.body!.createTime as string);
    assert.equal(lifetime, 3600_000, "expirationTime (the hosted name) is createTime plus the ttl");
    const role = made.body!.role as JsonObject;
    assert.deepEqual([role.uid, role.name], [builtInRole("viewer").uid, "viewer"], "the role is hydrated");
    assert.ok((role.capabilities as string[]).includes("CAP_IAM_GROUPS_LIST"));
    assert.ok(made.body!.updateTime, "updateTime is shown (spec 2)");
    assert.equal(made.body!.updateTime, made.body!.createTime, "a new invite's update time is its create time");
    const get = () => call(GroupInvitesService, "GetGroupInvite", { uid: made.body!.uid as string }, { method: "GET", path: `/iam/v2/groupInvites/${made.body!.uid as string}` });
    const got = await get();
    assert.equal((got.body?.role as JsonObject).name, "viewer");
    assert.equal(got.body?.expirationTime, made.body!.expirationTime);
    assert.equal(got.body?.updateTime, made.body!.createTime);
    const code = made.body!.code as string;
    assert.ok(code);
    const token = await newcomer();
    const read = () => call(GroupsService, "GetGroup", { uid: group }, { method: "GET", path: `/iam/v2/groups/${group}` }, token);
    assert.equal((await read()).code, 7);
    const redeem = (t: string) => call(GroupInvitesService, "RedeemGroupInvite", { code }, { method: "POST", path: "/iam/v2/groupInvites:redeem", body: { code } }, t);
    const redeemed = await redeem(token);
    assert.equal(redeemed.code, 0, redeemed.message);
    assert.equal(redeemed.body?.groupUid, group);
    assert.equal((await read()).code, 0);
    const used = (await get()).body!;
    assert.ok(used.usedTime, "a redeemed single-use invite shows when");
    assert.equal(used.updateTime, used.usedTime, "its redemption is its last change");

    const again = await redeem(await newcomer());
    assert.equal(again.code, 9);
    assert.equal(reasonOf(again), "FAILED_PRECONDITION");
    assert.equal((detailOf(again, "PreconditionFailure")?.violations as JsonObject[])[0].type, "INVITE_USED");
    if (wireName === "rest") assert.equal(again.httpStatus, 400);

    const unknown = await call(GroupInvitesService, "RedeemGroupInvite", { code: "nope" }, { method: "POST", path: "/iam/v2/groupInvites:redeem", body: { code: "nope" } }, token);
    assert.equal(unknown.code, 5);
    if (wireName === "rest") assert.equal(unknown.httpStatus, 404);
  });

  test("UpdateGroupInvite (PATCH with a field mask) changes the role, email and lifetime; single_use stays; the code keeps working", async () => {
    const group = await folder(`invite update ${wireName}`);
    const viewer = builtInRole("viewer").uid;
    const editor = builtInRole("editor").uid;
    const body = { roleUid: viewer, email: "a@example.com", singleUse: true, ttl: "3600s" };
    const made = await call(GroupInvitesService, "CreateGroupInvite", { parent: group, groupInvite: body }, { method: "POST", path: `/iam/v2/groupInvites/${group}`, body });
    assert.equal(made.code, 0, made.message);
    const uid = made.body!.uid as string;
    const update = (patch: JsonObject, mask?: string, token?: string) =>
      call(
        GroupInvitesService,
        "UpdateGroupInvite",
        { groupInvite: { uid, ...patch }, ...(mask === undefined ? {} : { updateMask: mask }) },
        { method: "PATCH", path: `/iam/v2/groupInvites/${uid}${mask === undefined ? "" : `?updateMask=${mask}`}`, body: patch },
        token,
      );

    const emailed = await update({ email: "b@example.com" });
    assert.equal(emailed.code, 0, emailed.message);
    assert.deepEqual(
      [emailed.body?.email, emailed.body?.roleUid, emailed.body?.expirationTime, emailed.body?.singleUse, emailed.body?.code, emailed.body?.createTime],
      ["b@example.com", viewer, made.body!.expirationTime, true, undefined, made.body!.createTime],
      "only the email changed; the code is not shown",
    );
    assert.ok(Date.parse(emailed.body!.updateTime as string) >= Date.parse(made.body!.updateTime as string));

    // A mask names the only fields that change: the role, not the email in the body.
    const promoted = await update({ roleUid: editor, email: "ignored@example.com" }, "roleUid");
    assert.equal(promoted.code, 0, promoted.message);
    assert.deepEqual([promoted.body?.roleUid, (promoted.body?.role as JsonObject).name, promoted.body?.email], [editor, "editor", "b@example.com"]);

    const renewed = await update({ ttl: "7200s" }, "ttl");
    assert.equal(renewed.code, 0, renewed.message);
    assert.equal(Date.parse(renewed.body!.expirationTime as string) - Date.parse(renewed.body!.updateTime as string), 7200_000, "a ttl counts from the update");
    assert.equal(renewed.body?.ttl, undefined, "ttl is input only");

    const fields = (o: Outcome) => ((detailOf(o, "BadRequest")?.fieldViolations as JsonObject[]) ?? []).map((v) => v.field);
    const immutable = await update({ singleUse: false }, "singleUse");
    assert.equal(immutable.code, 3);
    assert.deepEqual(fields(immutable), ["group_invite.single_use"]);
    if (wireName === "rest") assert.equal(immutable.httpStatus, 400);
    const same = await update({ singleUse: true }, "singleUse");
    assert.equal(same.code, 0, "an immutable field may be sent with its value");
    const bad = await update({ email: "not an email", ttl: "1s" });
    assert.equal(bad.code, 3);
    assert.deepEqual(fields(bad).sort(), ["group_invite.email", "group_invite.ttl"]);
    const unknown = await update({ email: "c@example.com" }, "colour");
    assert.equal(unknown.code, 3);
    assert.deepEqual(fields(unknown), ["update_mask"]);

    assert.equal((await update({ email: "c@example.com" }, undefined, await newcomer())).code, 7, "a caller without CAP_IAM_GROUP_INVITES_UPDATE is refused");
    const missing = newChildUid(group);
    const gone = await call(GroupInvitesService, "UpdateGroupInvite", { groupInvite: { uid: missing, email: "c@example.com" } }, { method: "PATCH", path: `/iam/v2/groupInvites/${missing}`, body: { email: "c@example.com" } });
    assert.equal(gone.code, 5);
    if (wireName === "rest") assert.equal(gone.httpStatus, 404);

    const got = await call(GroupInvitesService, "GetGroupInvite", { uid }, { method: "GET", path: `/iam/v2/groupInvites/${uid}` });
    assert.deepEqual([got.body?.roleUid, got.body?.email, got.body?.expirationTime], [editor, "b@example.com", renewed.body!.expirationTime]);
    const code = made.body!.code as string;
    const redeem = async () => call(GroupInvitesService, "RedeemGroupInvite", { code }, { method: "POST", path: "/iam/v2/groupInvites:redeem", body: { code } }, await newcomer());
    const bound = await redeem();
    assert.equal(bound.code, 9, "an invite bound to an email admits only a person whose provider verified it, not a machine");
    assert.match(bound.message ?? "", /another email address/);
    assert.equal((await update({ email: "" }, "email")).code, 0);
    const redeemed = await redeem();
    assert.equal(redeemed.code, 0, redeemed.message);
    assert.equal(redeemed.body?.roleUid, editor, "the code grants the role the invite names now");
  });

  test("terms accepted at the organization are listed for a folder; an association is deleted with an empty body", async () => {
    const group = await folder(`terms ${wireName}`);
    const doc = `tos-${wireName}`;
    const accepted = await call(
      TermsService,
      "AcceptTerms",
      { group: server().org.uid, documentIds: [doc] },
      { method: "POST", path: `/iam/v2/terms/${server().org.uid}`, body: { documentIds: [doc] } },
    );
    assert.equal(accepted.code, 0, accepted.message);
    assert.deepEqual([accepted.body?.group, accepted.body?.documentIds], [server().org.uid, [doc]]);
    const record = (accepted.body?.termsAcceptances as JsonObject[])[0];
    assert.equal(record.docId, doc);
    assert.ok(record.updateTime, "updateTime is shown (spec 2)");
    assert.equal(record.updateTime, record.createTime, "an acceptance is never changed");
    const listed = await call(TermsService, "ListTermsAcceptances", { group, docId: doc }, { method: "GET", path: `/iam/v2/terms/${group}?docId=${doc}` });
    assert.equal(listed.code, 0, listed.message);
    const acceptances = listed.body?.termsAcceptances as JsonObject[];
    assert.deepEqual(acceptances.map((a) => [a.docId, a.groupUid, a.orgUid, a.acceptedBy, a.updateTime]), [[doc, server().org.uid, server().org.uid, server().ownerUid, record.updateTime]]);
    assert.equal(listed.body?.totalCount, "1");

    const body = {
      name: "cloud",
      amazon: { account: "123456789012" },
      google: { projectId: "my-project-1", projectNumber: "987654321" },
      azure: { tenantId: "0f0e0d0c-0b0a-0908-0706-050403020100", clientIds: { ingester: "00000000-0000-0000-0000-000000000001" } },
      github: { appInstallations: { "12345": { installations: [{ installationId: "678", name: "acme" }] } } },
    };
    const made = await call(AccountAssociationsService, "CreateAccountAssociation", { parent: group, accountAssociation: body }, { method: "POST", path: `/iam/v2/accountAssociations/${group}`, body });
    assert.equal(made.code, 0, made.message);
    assert.equal(made.body?.uid, group);
    const read = await call(AccountAssociationsService, "GetAccountAssociation", { uid: group }, { method: "GET", path: `/iam/v2/accountAssociations/${group}` });
    assert.equal(read.code, 0, read.message);
    for (const out of [made, read]) {
      const { amazon, google, azure, github } = out.body!;
      assert.deepEqual({ amazon, google, azure, github }, { amazon: body.amazon, google: body.google, azure: body.azure, github: body.github }, "the hosted nesting, int64 as JSON strings");
    }
    const azure = { tenantId: "0f0e0d0c-0b0a-0908-0706-050403020100", clientIds: { "bad name": "x" } };
    const refused = await call(
      AccountAssociationsService,
      "UpdateAccountAssociation",
      { accountAssociation: { uid: group, azure }, updateMask: "azure" },
      { method: "PATCH", path: `/iam/v2/accountAssociations/${group}?updateMask=azure`, body: { azure } },
    );
    assert.equal(refused.code, 3);
    assert.deepEqual((detailOf(refused, "BadRequest")?.fieldViolations as JsonObject[]).map((v) => v.field), [
      'account_association.azure.client_ids["bad name"]',
      'account_association.azure.client_ids["bad name"]',
    ]);
    const deleted = await call(AccountAssociationsService, "DeleteAccountAssociation", { uid: group }, { method: "DELETE", path: `/iam/v2/accountAssociations/${group}` });
    assert.equal(deleted.code, 0, deleted.message);
    assert.deepEqual(deleted.body, {});
  });
});
