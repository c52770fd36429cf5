import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import type { JsonObject } from "@bufbuild/protobuf";
import { AccountAssociationsService } from "../../gen/platform/iam/v2/account_associations_service_pb.js";
import { GroupInvitesService } from "../../gen/platform/iam/v2/group_invites_service_pb.js";
import { GroupsService } from "../../gen/platform/iam/v2/groups_service_pb.js";
import { IdentityProvidersService } from "../../gen/platform/iam/v2/identity_providers_service_pb.js";
import { TermsService } from "../../gen/platform/iam/v2/terms_service_pb.js";
import { newChildUid } from "../../src/api/uidp.js";
import { builtInRole } from "../../src/auth/capabilities.js";
import { insertIdentity } from "../../src/store/repositories/identities.js";
import { startTestServer, type TestServer } from "../support/test-server.js";
import { allWires, detailOf, methodOf, reasonOf, type Wire } from "../support/wires.js";

let server: TestServer;
let wires: Wire[];

before(async () => {
  server = await startTestServer();
  wires = allWires(server.apiPort);
});

after(async () => {
  for (const wire of wires) wire.close();
  await server.close();
});

/** A new identity of the organization with no binding, and its token. */
async function newcomer(): Promise<string> {
  const uid = newChildUid(server.org.uid);
  const now = Date.now();
  await insertIdentity(server.store.db, { uid, group_uid: server.org.uid, name: "newcomer", description: "", claim_match: "", static_keys: "", last_seen_time: null, create_time: now, update_time: now });
  return (await server.server.tokens.issue({ subject: uid, audience: "http://api.test" })).token;
}

for (const wireName of ["grpc", "connect", "grpc-web", "rest"] as const) {
  describe(`IAM extras over ${wireName}`, () => {
    const wire = () => wires.find((w) => w.name === wireName)!;
    const call = (service: Parameters<typeof methodOf>[0], name: string, request: JsonObject, rest: { method: string; path: string; body?: JsonObject }, token = server.ownerToken) =>
      wire().call(methodOf(service, name), request, rest, token);
    const folder = async (name: string) => {
      const out = await call(GroupsService, "CreateGroup", { parent: server.org.uid, group: { name } }, { method: "POST", path: `/iam/v2/groups/${server.org.uid}`, body: { name } });
      assert.equal(out.code, 0, out.message);
      return out.body!.uid as string;
    };

    test("an identity provider is created and read without its client secret", async () => {
      const group = await folder(`idp ${wireName}`);
      const body = { name: "corp", issuer: "https://login.example.com", clientId: "cid", clientSecret: "hidden", additionalScopes: ["email"] };
      const made = await call(IdentityProvidersService, "CreateIdentityProvider", { parent: group, identityProvider: body }, { method: "POST", path: `/iam/v2/identityProviders/${group}`, body });
      assert.equal(made.code, 0, made.message);
      assert.equal(made.body?.clientSecret, undefined);
      const uid = made.body!.uid as string;
      const read = await call(IdentityProvidersService, "GetIdentityProvider", { uid }, { method: "GET", path: `/iam/v2/identityProviders/${uid}` });
      assert.equal(read.code, 0, read.message);
      assert.equal(read.body?.issuer, "https://login.example.com");
      assert.equal(read.body?.clientSecret, undefined);

      const bad = { name: "bad", issuer: "ftp://x", clientId: "c" };
      const refused = await call(IdentityProvidersService, "CreateIdentityProvider", { parent: group, identityProvider: bad }, { method: "POST", path: `/iam/v2/identityProviders/${group}`, body: bad });
      assert.equal(refused.code, 3);
      assert.deepEqual((detailOf(refused, "BadRequest")?.fieldViolations as JsonObject[]).map((v) => v.field).sort(), ["identity_provider.client_secret", "identity_provider.issuer"]);
      if (wireName === "rest") assert.equal(refused.httpStatus, 400);
    });

    test("an invite code is redeemed once by another identity, which can then read the group", async () => {
      const group = await folder(`invite ${wireName}`);
      const body = { roleUid: builtInRole("viewer").uid, singleUse: true, ttl: "3600s" };
      const made = await call(GroupInvitesService, "CreateGroupInvite", { parent: group, groupInvite: body }, { method: "POST", path: `/iam/v2/groupInvites/${group}`, body });
      assert.equal(made.code, 0, made.message);
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

      const used = await redeem(await newcomer());
      assert.equal(used.code, 9);
      assert.equal(reasonOf(used), "FAILED_PRECONDITION");
      assert.equal((detailOf(used, "PreconditionFailure")?.violations as JsonObject[])[0].type, "INVITE_USED");
      if (wireName === "rest") assert.equal(used.httpStatus, 400);

      const unknown = await call(GroupInvitesService, "RedeemGroupInvite", { code: "nope" }, { method: "POST", path: "/iam/v2/groupInvites:redeem", body: { code: "nope" } }, token);
      assert.equal(unknown.code, 5);
      if (wireName === "rest") assert.equal(unknown.httpStatus, 404);
    });

    test("terms accepted at the organization are listed for a folder; an association is deleted with an empty body", async () => {
      const group = await folder(`terms ${wireName}`);
      const doc = `tos-${wireName}`;
      const accepted = await call(TermsService, "AcceptTerms", { group: server.org.uid, docIds: [doc] }, { method: "POST", path: `/iam/v2/terms/${server.org.uid}`, body: { docIds: [doc] } });
      assert.equal(accepted.code, 0, accepted.message);
      const listed = await call(TermsService, "ListTerms", { group, docId: doc }, { method: "GET", path: `/iam/v2/terms/${group}?docId=${doc}` });
      assert.equal(listed.code, 0, listed.message);
      const acceptances = listed.body?.acceptances as JsonObject[];
      assert.deepEqual(acceptances.map((a) => [a.docId, a.groupUid, a.orgUid, a.acceptedBy]), [[doc, server.org.uid, server.org.uid, server.ownerUid]]);
      assert.equal(listed.body?.totalCount, "1");

      const body = { name: "cloud", amazonAccountId: "123456789012" };
      const made = await call(AccountAssociationsService, "CreateAccountAssociation", { parent: group, accountAssociation: body }, { method: "POST", path: `/iam/v2/accountAssociations/${group}`, body });
      assert.equal(made.code, 0, made.message);
      assert.equal(made.body?.uid, group);
      const deleted = await call(AccountAssociationsService, "DeleteAccountAssociation", { uid: group }, { method: "DELETE", path: `/iam/v2/accountAssociations/${group}` });
      assert.equal(deleted.code, 0, deleted.message);
      assert.deepEqual(deleted.body, {});
    });
  });
}
