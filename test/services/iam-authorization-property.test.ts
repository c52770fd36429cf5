import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import type { DescService } from "@bufbuild/protobuf";
import { Code, ConnectError, createClient, createRouterTransport, type Transport } from "@connectrpc/connect";
import fc from "fast-check";
import { AccountAssociationsService } from "../../gen/platform/iam/v2/account_associations_service_pb.js";
import { ExternalGroupRoleMappingsService } from "../../gen/platform/iam/v2/external_group_role_mappings_service_pb.js";
import { GroupInvitesService } from "../../gen/platform/iam/v2/group_invites_service_pb.js";
import { IdentitiesService } from "../../gen/platform/iam/v2/identities_service_pb.js";
import { IdentityProvidersService } from "../../gen/platform/iam/v2/identity_providers_service_pb.js";
import { MembersService } from "../../gen/platform/iam/v2/members_service_pb.js";
import { RoleBindingsService } from "../../gen/platform/iam/v2/role_bindings_service_pb.js";
import { PullTokensService } from "../../gen/platform/iam/v2/pull_tokens_service_pb.js";
import { RolesService } from "../../gen/platform/iam/v2/roles_service_pb.js";
import { TermsService } from "../../gen/platform/iam/v2/terms_service_pb.js";
import { newChildUid } from "../../src/aip/uidp.js";
import { BUILT_IN_ROLES } from "../../src/access/capabilities.js";
import { bootstrapOrganization } from "../../src/server/bootstrap.js";
import { insertIdentity } from "../../src/domains/iam/store/identities.js";
import { startInProcess, type InProcessApi } from "../support/in-process.js";

/**
 * Every scoped IAM RPC and two Lists, over generated group trees and bindings,
 * against an independent model. The table below is the model's own statement of
 * what each RPC needs (written here, not read from the protos): the capability,
 * and how a request names a group `g`. Requests name resources that do not
 * exist (or carry invalid bodies), so an allowed call fails for another reason
 * and nothing changes: the only thing observed is whether permission was denied.
 */

type RoleName = "viewer" | "editor" | "owner" | "registry.pull" | "registry.pull_token_creator";
const ROLES: RoleName[] = ["viewer", "editor", "owner", "registry.pull", "registry.pull_token_creator"];
const capsOf = (role: RoleName) => new Set(BUILT_IN_ROLES.find((r) => r.name === role)!.capabilities);
const roleUid = (role: RoleName) => BUILT_IN_ROLES.find((r) => r.name === role)!.uid;

const one = (g: string) => newChildUid(g);
const two = (g: string) => newChildUid(newChildUid(g));

/** `capability: null` marks an RPC that never denies permission (Lists narrow instead; Redeem needs only a caller). */
const RPCS: Array<{ service: DescService; method: string; capability: string | null; request: (g: string) => object }> = [
  { service: IdentitiesService, method: "getIdentity", capability: "CAP_IAM_IDENTITY_LIST", request: (g) => ({ uid: one(g) }) },
  { service: IdentitiesService, method: "createIdentity", capability: "CAP_IAM_IDENTITY_CREATE", request: (g) => ({ parent: g, identity: { name: "" } }) },
  { service: IdentitiesService, method: "updateIdentity", capability: "CAP_IAM_IDENTITY_UPDATE", request: (g) => ({ identity: { uid: one(g), description: "x" } }) },
  { service: IdentitiesService, method: "deleteIdentity", capability: "CAP_IAM_IDENTITY_DELETE", request: (g) => ({ uid: one(g) }) },
  { service: RolesService, method: "getRole", capability: "CAP_IAM_ROLES_LIST", request: (g) => ({ uid: one(g) }) },
  { service: RolesService, method: "createRole", capability: "CAP_IAM_ROLES_CREATE", request: (g) => ({ parent: g, role: { name: "" } }) },
  { service: RolesService, method: "updateRole", capability: "CAP_IAM_ROLES_UPDATE", request: (g) => ({ role: { uid: one(g), description: "x" } }) },
  { service: RolesService, method: "deleteRole", capability: "CAP_IAM_ROLES_DELETE", request: (g) => ({ uid: one(g) }) },
  { service: RoleBindingsService, method: "getRoleBinding", capability: "CAP_IAM_ROLE_BINDINGS_LIST", request: (g) => ({ uid: one(g) }) },
  { service: RoleBindingsService, method: "createRoleBinding", capability: "CAP_IAM_ROLE_BINDINGS_CREATE", request: (g) => ({ parent: g, roleBinding: {} }) },
  { service: RoleBindingsService, method: "updateRoleBinding", capability: "CAP_IAM_ROLE_BINDINGS_UPDATE", request: (g) => ({ roleBinding: { uid: one(g), roleUid: roleUid("viewer") } }) },
  { service: RoleBindingsService, method: "deleteRoleBinding", capability: "CAP_IAM_ROLE_BINDINGS_DELETE", request: (g) => ({ uid: one(g) }) },
  { service: IdentityProvidersService, method: "getIdentityProvider", capability: "CAP_IAM_IDENTITY_PROVIDERS_LIST", request: (g) => ({ uid: one(g) }) },
  { service: IdentityProvidersService, method: "createIdentityProvider", capability: "CAP_IAM_IDENTITY_PROVIDERS_CREATE", request: (g) => ({ parent: g, identityProvider: {} }) },
  { service: IdentityProvidersService, method: "deleteIdentityProvider", capability: "CAP_IAM_IDENTITY_PROVIDERS_DELETE", request: (g) => ({ uid: one(g) }) },
  { service: AccountAssociationsService, method: "getAccountAssociation", capability: "CAP_IAM_ACCOUNT_ASSOCIATIONS_LIST", request: (g) => ({ uid: g }) },
  { service: AccountAssociationsService, method: "deleteAccountAssociation", capability: "CAP_IAM_ACCOUNT_ASSOCIATIONS_DELETE", request: (g) => ({ uid: g }) },
  { service: GroupInvitesService, method: "getGroupInvite", capability: "CAP_IAM_GROUP_INVITES_LIST", request: (g) => ({ uid: one(g) }) },
  { service: GroupInvitesService, method: "createGroupInvite", capability: "CAP_IAM_GROUP_INVITES_CREATE", request: (g) => ({ parent: g, groupInvite: {} }) },
  { service: GroupInvitesService, method: "updateGroupInvite", capability: "CAP_IAM_GROUP_INVITES_UPDATE", request: (g) => ({ groupInvite: { uid: one(g), email: "x@example.com" } }) },
  { service: GroupInvitesService, method: "deleteGroupInvite", capability: "CAP_IAM_GROUP_INVITES_DELETE", request: (g) => ({ uid: one(g) }) },
  { service: ExternalGroupRoleMappingsService, method: "getExternalGroupRoleMapping", capability: "CAP_IAM_EXTERNAL_GROUP_ROLE_MAPPINGS_LIST", request: (g) => ({ uid: two(g) }) },
  { service: ExternalGroupRoleMappingsService, method: "createExternalGroupRoleMapping", capability: "CAP_IAM_EXTERNAL_GROUP_ROLE_MAPPINGS_CREATE", request: (g) => ({ parent: one(g), externalGroupRoleMapping: {} }) },
  { service: ExternalGroupRoleMappingsService, method: "deleteExternalGroupRoleMapping", capability: "CAP_IAM_EXTERNAL_GROUP_ROLE_MAPPINGS_DELETE", request: (g) => ({ uid: two(g) }) },
  { service: MembersService, method: "listMembers", capability: "CAP_IAM_ROLE_BINDINGS_LIST", request: (g) => ({ parent: g, pageSize: -1 }) },
  { service: PullTokensService, method: "createPullToken", capability: "CAP_REGISTRY_PULL_TOKENS_CREATE", request: (g) => ({ parent: g, ttl: { seconds: 1n } }) },
  { service: TermsService, method: "acceptTerms", capability: "CAP_TERMS_ACCEPT", request: (g) => ({ group: g, documentIds: [] }) },
  { service: TermsService, method: "listTermsAcceptances", capability: "CAP_TERMS_LIST", request: (g) => ({ group: g, pageSize: -1 }) },
  { service: IdentityProvidersService, method: "updateIdentityProvider", capability: "CAP_IAM_IDENTITY_PROVIDERS_UPDATE", request: (g) => ({ identityProvider: { uid: one(g) } }) },
  { service: AccountAssociationsService, method: "createAccountAssociation", capability: "CAP_IAM_ACCOUNT_ASSOCIATIONS_CREATE", request: (g) => ({ parent: g, accountAssociation: { name: "x".repeat(10_000) } }) },
  { service: AccountAssociationsService, method: "updateAccountAssociation", capability: "CAP_IAM_ACCOUNT_ASSOCIATIONS_UPDATE", request: (g) => ({ accountAssociation: { uid: g, name: "x".repeat(10_000) } }) },
  { service: ExternalGroupRoleMappingsService, method: "updateExternalGroupRoleMapping", capability: "CAP_IAM_EXTERNAL_GROUP_ROLE_MAPPINGS_UPDATE", request: (g) => ({ externalGroupRoleMapping: { uid: two(g) } }) },
  { service: GroupInvitesService, method: "redeemGroupInvite", capability: null, request: () => ({ code: "no-such-code" }) },
  { service: RolesService, method: "listRoles", capability: null, request: (g) => ({ uidp: { descendantsOf: g } }) },
  { service: IdentityProvidersService, method: "listIdentityProviders", capability: null, request: (g) => ({ uidp: { descendantsOf: g } }) },
  { service: AccountAssociationsService, method: "listAccountAssociations", capability: null, request: (g) => ({ uidp: { descendantsOf: g } }) },
  { service: GroupInvitesService, method: "listGroupInvites", capability: null, request: (g) => ({ uidp: { descendantsOf: g } }) },
  { service: ExternalGroupRoleMappingsService, method: "listExternalGroupRoleMappings", capability: null, request: (g) => ({ uidp: { descendantsOf: g } }) },
];

interface Model {
  parent: number[];
  bindings: Array<{ who: number; role: RoleName; on: number }>;
}

function holds(model: Model, who: number, capability: string, node: number): boolean {
  for (let n = node; n !== -1; n = model.parent[n]) {
    if (model.bindings.some((b) => b.who === who && b.on === n && capsOf(b.role).has(capability))) return true;
  }
  return false;
}

const scenario = fc.record({
  parents: fc.array(fc.nat(), { minLength: 1, maxLength: 6 }).map((xs) => [-1, ...xs.map((x, i) => x % (i + 1))]),
  bindings: fc.array(fc.record({ who: fc.nat(1), role: fc.constantFrom(...ROLES), on: fc.nat() }), { minLength: 2, maxLength: 6 }),
  identities: fc.array(fc.nat(), { maxLength: 5 }),
  calls: fc.array(fc.record({ who: fc.nat(1), rpc: fc.nat(RPCS.length - 1), on: fc.nat() }), { minLength: 1, maxLength: 10 }),
});

let api: InProcessApi;
let transport: Transport;
before(async () => {
  api = await startInProcess();
  transport = createRouterTransport(api.host.routes, { router: { interceptors: api.host.interceptors } });
});
after(() => api.close());

test("IAM decisions match the model: every scoped RPC, and the lists of identities and role bindings", async () => {
  let run = 0;
  await fc.assert(
    fc.asyncProperty(scenario, async ({ parents, bindings, identities, calls }) => {
      run++;
      const now = Date.now();
      const { organization } = await bootstrapOrganization(api.store, `iam-prop-${run}-${now}`, now);
      const owner = api.as(await api.identityWith(organization.uid, "owner", organization.uid));
      const groups = createClient(api.host.services.find((s) => s.typeName === "platform.iam.v2.GroupsService")! as never, transport) as never as {
        createGroup(req: object, opts: object): Promise<{ uid: string }>;
      };
      const uids = [organization.uid];
      for (let i = 1; i < parents.length; i++) uids.push((await groups.createGroup({ parent: uids[parents[i]], group: { name: `n${i}` } }, owner)).uid);
      const model: Model = { parent: parents, bindings: bindings.map((b) => ({ ...b, on: b.on % uids.length })) };
      // Callers live in the organization; their bindings are the generated ones (each caller has at least one).
      for (const who of [0, 1]) if (!model.bindings.some((b) => b.who === who)) model.bindings.push({ who, role: "viewer", on: 0 });
      const callers: string[] = [];
      const tokens: string[] = [];
      for (const who of [0, 1]) {
        const mine = model.bindings.filter((b) => b.who === who);
        const token = await api.identityWith(organization.uid, mine[0].role, uids[mine[0].on]);
        tokens.push(token);
        callers.push(JSON.parse(Buffer.from(token.split(".")[1], "base64url").toString()).sub as string);
        const done = new Set([`${mine[0].role}/${mine[0].on}`]);
        for (const b of mine.slice(1)) {
          if (done.has(`${b.role}/${b.on}`)) continue;
          done.add(`${b.role}/${b.on}`);
          await api.store.db
            .insertInto("role_bindings")
            .values({ uid: newChildUid(uids[b.on]), group_uid: uids[b.on], identity_uid: callers[who], role_uid: roleUid(b.role), create_time: now })
            .execute();
        }
      }
      for (const at of identities) {
        const node = at % uids.length;
        await insertIdentity(api.store.db, { uid: newChildUid(uids[node]), group_uid: uids[node], name: "w", description: "", claim_match: "", static_keys: "", last_seen_time: null, create_time: now, update_time: now });
      }
      const inOrg = { low: `${organization.uid}`, high: `${organization.uid}0` };
      const allIdentities = await api.store.db.selectFrom("identities").select(["uid", "group_uid"]).where("uid", ">=", inOrg.low).where("uid", "<", inOrg.high).execute();
      const nodeOf = (groupUid: string) => uids.indexOf(groupUid);
      const allBindings = await api.store.db.selectFrom("role_bindings").select(["uid", "group_uid"]).where("uid", ">=", inOrg.low).where("uid", "<", inOrg.high).execute();

      for (const call of calls) {
        const rpc = RPCS[call.rpc];
        const node = call.on % uids.length;
        const client = createClient(rpc.service, transport) as unknown as Record<string, (req: object, opts: object) => Promise<unknown>>;
        let code: Code | undefined;
        try {
          await client[rpc.method](rpc.request(uids[node]), api.as(tokens[call.who]));
        } catch (error) {
          code = ConnectError.from(error).code;
        }
        const where = `${rpc.method} by ${call.who} on node ${node}`;
        if (rpc.capability === null || holds(model, call.who, rpc.capability, node)) assert.notEqual(code, Code.PermissionDenied, where);
        else assert.equal(code, Code.PermissionDenied, where);
      }

      for (const who of [0, 1]) {
        const as = api.as(tokens[who]);
        const identitiesClient = createClient(IdentitiesService, transport);
        const listedIdentities = await identitiesClient.listIdentities({ uidp: { descendantsOf: organization.uid }, pageSize: 200 }, as);
        const expectIdentities = allIdentities.filter((i) => holds(model, who, "CAP_IAM_IDENTITY_LIST", nodeOf(i.group_uid))).map((i) => i.uid);
        assert.deepEqual(listedIdentities.identities.map((i) => i.uid).sort(), expectIdentities.sort(), `identities visible to ${who}`);
        assert.equal(listedIdentities.totalCount, BigInt(expectIdentities.length));
        const bindingsClient = createClient(RoleBindingsService, transport);
        const listed = await bindingsClient.listRoleBindings({ uidp: { descendantsOf: organization.uid }, pageSize: 200 }, as);
        const expected = allBindings.filter((b) => holds(model, who, "CAP_IAM_ROLE_BINDINGS_LIST", nodeOf(b.group_uid))).map((b) => b.uid);
        assert.deepEqual(listed.roleBindings.map((b) => b.uid).sort(), expected.sort(), `bindings visible to ${who}`);
        assert.equal(listed.totalCount, BigInt(expected.length));
      }
    }),
    { numRuns: 20 },
  );
});

test("the model covers every IAM RPC (GroupsService has its own property test)", () => {
  const covered = new Set([...RPCS.map((r) => `${r.service.typeName}.${r.method}`), "platform.iam.v2.IdentitiesService.listIdentities", "platform.iam.v2.RoleBindingsService.listRoleBindings"]);
  const missing = api.host.services
    .filter((s) => s.typeName.startsWith("platform.iam.v2.") && s.typeName !== "platform.iam.v2.GroupsService")
    .flatMap((s) => s.methods.map((m) => `${s.typeName}.${m.localName}`))
    .filter((name) => !covered.has(name));
  assert.deepEqual(missing, []);
});
