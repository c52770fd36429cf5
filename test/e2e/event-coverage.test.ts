import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import type { DescMethod, DescService, JsonObject } from "@bufbuild/protobuf";
import { MethodOptions_IdempotencyLevel } from "@bufbuild/protobuf/wkt";
import { SubscriptionsService } from "../../gen/platform/events/v2/subscriptions_service_pb.js";
import { AccountAssociationsService } from "../../gen/platform/iam/v2/account_associations_service_pb.js";
import { ExternalGroupRoleMappingsService } from "../../gen/platform/iam/v2/external_group_role_mappings_service_pb.js";
import { GroupInvitesService } from "../../gen/platform/iam/v2/group_invites_service_pb.js";
import { GroupsService } from "../../gen/platform/iam/v2/groups_service_pb.js";
import { IdentitiesService } from "../../gen/platform/iam/v2/identities_service_pb.js";
import { IdentityProvidersService } from "../../gen/platform/iam/v2/identity_providers_service_pb.js";
import { RoleBindingsService } from "../../gen/platform/iam/v2/role_bindings_service_pb.js";
import { RolesService } from "../../gen/platform/iam/v2/roles_service_pb.js";
import { TermsService } from "../../gen/platform/iam/v2/terms_service_pb.js";
import { GroupAccountAssociations as AccountAssociationsV1 } from "../../gen/platform/iam/v1/account_associations_pb.js";
import { ExternalGroupRoleMappings as ExternalGroupRoleMappingsV1 } from "../../gen/platform/iam/v1/external_group_role_mappings_pb.js";
import { Groups as GroupsV1 } from "../../gen/platform/iam/v1/group_pb.js";
import { GroupInvites as GroupInvitesV1 } from "../../gen/platform/iam/v1/group_invites_pb.js";
import { IdentityProviders as IdentityProvidersV1 } from "../../gen/platform/iam/v1/identity_providers_pb.js";
import { Terms as TermsV1 } from "../../gen/platform/iam/v1/terms_pb.js";
import { Identities as IdentitiesV1 } from "../../gen/platform/iam/v1/identity_pb.js";
import { RoleBindings as RoleBindingsV1 } from "../../gen/platform/iam/v1/role_binding_pb.js";
import { Roles as RolesV1 } from "../../gen/platform/iam/v1/role_pb.js";
import { Registry as RegistryV1 } from "../../gen/platform/registry/v1/registry_pb.js";
import { ReposService } from "../../gen/platform/registry/v2/repos_service_pb.js";
import { TagsService } from "../../gen/platform/registry/v2/tags_service_pb.js";
import { builtInRole } from "../../src/auth/capabilities.js";
import { API_SERVICES } from "../../src/domains/index.js";
import { eventType } from "../../src/interceptors/event-interceptor.js";
import { startTestServer, type TestServer } from "../support/test-server.js";
import { connectWire, methodOf, type Wire } from "../support/wires.js";

/**
 * Every RPC that changes something writes its event: this walks every such RPC of every
 * domain (the list is read from the served services, so a new one fails here until it is
 * walked) and checks that each successful call left exactly one event of its type and subject.
 */
let server: TestServer;
let wire: Wire;
before(async () => {
  server = await startTestServer({ events: { allowLocalSinks: true } });
  wire = connectWire(server.apiPort);
});
after(async () => {
  wire.close();
  await server.close();
});

/** Changing RPCs not walked here, each with the reason. */
const NOT_WALKED: Record<string, string> = {
  "platform.iam.v2.GroupInvitesService/RedeemGroupInvite": "needs a second identity's token; its event is written by the same interceptor",
};

test("every changing RPC of every domain writes one event of its type, about its resource, in its transaction", async () => {
  const walked = new Set<string>();
  const viewer = builtInRole("viewer").uid;
  /** `twin`: the v2 method a v1 one maps onto, whose event the v1 call writes. */
  const call = async (service: DescService, name: string, request: JsonObject, subject?: (body: JsonObject) => string, twin?: DescMethod): Promise<JsonObject> => {
    const method = methodOf(service, name);
    const type = eventType("dev.platform", twin ?? method);
    const count = async () =>
      Number((await server.store.db.selectFrom("events").select((eb) => eb.fn.countAll<number>().as("n")).where("type", "=", type).executeTakeFirstOrThrow()).n);
    const before = await count();
    const out = await wire.call(method, request, { method: "POST", path: "" }, server.ownerToken);
    assert.equal(out.code, 0, `${name}: ${out.message}`);
    assert.equal(await count(), before + 1, `${name} wrote one ${type} event`);
    const event = await server.store.db.selectFrom("events").selectAll().where("type", "=", type).orderBy("position", "desc").executeTakeFirstOrThrow();
    if (subject) assert.equal(event.subject, subject(out.body ?? {}), `${name}'s event is about its resource`);
    walked.add(`${service.typeName}/${name}`);
    return out.body ?? {};
  };
  const org = server.org.uid;
  const uid = (b: JsonObject) => b.uid as string;

  const group = uid(await call(GroupsService, "CreateGroup", { parent: org, group: { name: "coverage" } }, uid));
  await call(GroupsService, "UpdateGroup", { group: { uid: group, description: "d" } }, () => group);
  const identity = uid(
    await call(IdentitiesService, "CreateIdentity", { parent: group, identity: { name: "ci", claimMatch: { issuer: "https://issuer.example.com", subject: "s" } } }, uid),
  );
  await call(IdentitiesService, "UpdateIdentity", { identity: { uid: identity, description: "d" } }, () => identity);
  const role = uid(await call(RolesService, "CreateRole", { parent: group, role: { name: "reader", capabilities: ["CAP_REPO_LIST"] } }, uid));
  await call(RolesService, "UpdateRole", { role: { uid: role, description: "d" } }, () => role);
  const binding = uid(await call(RoleBindingsService, "CreateRoleBinding", { parent: group, roleBinding: { identityUid: identity, roleUid: role } }, uid));
  await call(RoleBindingsService, "UpdateRoleBinding", { roleBinding: { uid: binding, identityUid: identity, roleUid: viewer } }, () => binding);
  const provider = uid(
    await call(
      IdentityProvidersService,
      "CreateIdentityProvider",
      { parent: group, identityProvider: { name: "corp", oidc: { issuer: "https://login.example.com", clientId: "cid", clientSecret: "hidden" } } },
      uid,
    ),
  );
  const providerEvent = await server.store.db.selectFrom("events").select("body").where("subject", "=", provider).executeTakeFirstOrThrow();
  assert.ok(!providerEvent.body.includes("hidden"), "an INPUT_ONLY secret is not in the event");
  await call(IdentityProvidersService, "UpdateIdentityProvider", { identityProvider: { uid: provider, oidc: { groupsClaim: "teams" } } }, () => provider);
  const mapping = uid(
    await call(ExternalGroupRoleMappingsService, "CreateExternalGroupRoleMapping", { parent: provider, externalGroupRoleMapping: { externalGroupId: "admins", roleUid: viewer } }, uid),
  );
  await call(ExternalGroupRoleMappingsService, "UpdateExternalGroupRoleMapping", { externalGroupRoleMapping: { uid: mapping, externalGroupId: "admins", roleUid: role } }, () => mapping);
  await call(AccountAssociationsService, "CreateAccountAssociation", { parent: group, accountAssociation: { name: "cloud", amazon: { account: "123456789012" } } }, () => group);
  await call(AccountAssociationsService, "UpdateAccountAssociation", { accountAssociation: { uid: group, description: "d" } }, () => group);
  const invite = uid(await call(GroupInvitesService, "CreateGroupInvite", { parent: group, groupInvite: { roleUid: viewer, ttl: "3600s" } }, uid));
  await call(TermsService, "AcceptTerms", { group: org, documentIds: ["tos"] });
  const repo = uid(await call(ReposService, "CreateRepo", { parent: group, repo: { name: "coverage/app" } }, uid));
  await call(ReposService, "UpdateRepo", { repo: { uid: repo, description: "d" } }, () => repo);
  await call(ReposService, "UpdateRepoReadme", { repoReadme: { uid: repo, content: "# hi" } }, () => repo);
  const tag = uid(await call(TagsService, "CreateTag", { parent: repo, tag: { name: "v1", digest: `sha256:${"b".repeat(64)}` } }, uid));
  await call(TagsService, "DeleteTag", { uid: tag }, () => tag);
  await call(ReposService, "DeleteRepo", { uid: repo }, () => repo);
  const subscription = uid(await call(SubscriptionsService, "CreateSubscription", { parent: group, subscription: { sink: "http://127.0.0.1:9/" } }, uid));
  await call(SubscriptionsService, "DeleteSubscription", { uid: subscription }, () => subscription);
  await call(GroupInvitesService, "DeleteGroupInvite", { uid: invite }, () => invite);
  await call(ExternalGroupRoleMappingsService, "DeleteExternalGroupRoleMapping", { uid: mapping }, () => mapping);
  await call(IdentityProvidersService, "DeleteIdentityProvider", { uid: provider }, () => provider);
  await call(AccountAssociationsService, "DeleteAccountAssociation", { uid: group }, () => group);
  await call(RoleBindingsService, "DeleteRoleBinding", { uid: binding }, () => binding);
  await call(RolesService, "DeleteRole", { uid: role }, () => role);
  await call(IdentitiesService, "DeleteIdentity", { uid: identity }, () => identity);
  await call(GroupsService, "DeleteGroup", { uid: group }, () => group);

  // v1 writes: the events of the v2 calls they make (type and subject).
  const id = (b: JsonObject) => b.id as string;
  const v2 = (service: DescService, name: string) => methodOf(service, name);
  const g1 = id(await call(GroupsV1, "Create", { parent: org, group: { name: "coverage-v1" } }, id, v2(GroupsService, "CreateGroup")));
  await call(GroupsV1, "Update", { id: g1, name: "coverage-v1", description: "d" }, () => g1, v2(GroupsService, "UpdateGroup"));
  const i1 = id(
    await call(IdentitiesV1, "Create", { parentId: g1, identity: { name: "ci", claimMatch: { issuer: "https://issuer.example.com", subject: "s" } } }, id, v2(IdentitiesService, "CreateIdentity")),
  );
  await call(IdentitiesV1, "Update", { id: i1, name: "ci", claimMatch: { issuer: "https://issuer.example.com", subject: "t" } }, () => i1, v2(IdentitiesService, "UpdateIdentity"));
  const r1 = id(await call(RolesV1, "Create", { parentId: g1, role: { name: "reader", capabilities: ["CAP_REPO_LIST"] } }, id, v2(RolesService, "CreateRole")));
  await call(RolesV1, "Update", { id: r1, name: "reader", capabilities: ["CAP_TAG_LIST"] }, () => r1, v2(RolesService, "UpdateRole"));
  const b1 = id(await call(RoleBindingsV1, "Create", { parent: g1, roleBinding: { identity: i1, role: r1 } }, id, v2(RoleBindingsService, "CreateRoleBinding")));
  await call(RoleBindingsV1, "Update", { id: b1, identity: i1, role: viewer }, () => b1, v2(RoleBindingsService, "UpdateRoleBinding"));
  await call(RoleBindingsV1, "Delete", { id: b1 }, () => b1, v2(RoleBindingsService, "DeleteRoleBinding"));
  const oidc = { issuer: "https://login.example.com", clientId: "cid", clientSecret: "hidden-v1" };
  const p1 = id(await call(IdentityProvidersV1, "Create", { parentId: g1, identityProvider: { name: "corp", oidc } }, id, v2(IdentityProvidersService, "CreateIdentityProvider")));
  const p1Event = await server.store.db.selectFrom("events").select("body").where("subject", "=", p1).executeTakeFirstOrThrow();
  assert.ok(!p1Event.body.includes("hidden-v1"), "an INPUT_ONLY secret is not in a v1 call's event");
  await call(IdentityProvidersV1, "Update", { id: p1, name: "corp", oidc: { issuer: oidc.issuer, clientId: "cid2" } }, () => p1, v2(IdentityProvidersService, "UpdateIdentityProvider"));
  const m1 = id(
    await call(ExternalGroupRoleMappingsV1, "Create", { parentId: p1, mapping: { externalGroupId: "admins", roleUidp: viewer } }, id, v2(ExternalGroupRoleMappingsService, "CreateExternalGroupRoleMapping")),
  );
  await call(ExternalGroupRoleMappingsV1, "Delete", { id: m1 }, () => m1, v2(ExternalGroupRoleMappingsService, "DeleteExternalGroupRoleMapping"));
  await call(IdentityProvidersV1, "Delete", { id: p1 }, () => p1, v2(IdentityProvidersService, "DeleteIdentityProvider"));
  const group1 = (b: JsonObject) => b.group as string;
  await call(AccountAssociationsV1, "Create", { group: g1, name: "cloud", amazon: { account: "123456789012" } }, group1, v2(AccountAssociationsService, "CreateAccountAssociation"));
  await call(AccountAssociationsV1, "Update", { group: g1, name: "cloud", amazon: { account: "210987654321" } }, () => g1, v2(AccountAssociationsService, "UpdateAccountAssociation"));
  await call(AccountAssociationsV1, "Delete", { group: g1 }, () => g1, v2(AccountAssociationsService, "DeleteAccountAssociation"));
  const n1 = id(await call(GroupInvitesV1, "Create", { group: g1, role: viewer, ttl: "3600s" }, id, v2(GroupInvitesService, "CreateGroupInvite")));
  await call(GroupInvitesV1, "Delete", { id: n1 }, () => n1, v2(GroupInvitesService, "DeleteGroupInvite"));
  await call(TermsV1, "AcceptTerms", { group: org, documentIds: ["tos"] }, undefined, v2(TermsService, "AcceptTerms"));
  await call(RolesV1, "Delete", { id: r1 }, () => r1, v2(RolesService, "DeleteRole"));
  await call(IdentitiesV1, "Delete", { id: i1 }, () => i1, v2(IdentitiesService, "DeleteIdentity"));
  await call(GroupsV1, "Delete", { id: g1 }, () => g1, v2(GroupsService, "DeleteGroup"));
  const repo1 = id(await call(RegistryV1, "CreateRepo", { parentId: org, repo: { name: "coverage/v1" } }, id, v2(ReposService, "CreateRepo")));
  // A v1 PUT of a repo (with its readme) writes in one transaction: the v2 Update's event type.
  await call(RegistryV1, "UpdateRepo", { id: repo1, name: "coverage/v1", readme: "# v1" }, () => repo1, v2(ReposService, "UpdateRepo"));
  const tag1 = id(await call(RegistryV1, "CreateTag", { repoId: repo1, tag: { name: "v1", digest: `sha256:${"b".repeat(64)}` } }, id, v2(TagsService, "CreateTag")));
  // v2 has no UpdateTag: the v1 one writes its own type, `registry.tag.updated`.
  await call(RegistryV1, "UpdateTag", { id: tag1, name: "v1", digest: `sha256:${"c".repeat(64)}` }, () => tag1);
  await call(RegistryV1, "DeleteTag", { id: tag1 }, () => tag1, v2(TagsService, "DeleteTag"));
  await call(RegistryV1, "DeleteRepo", { id: repo1 }, () => repo1, v2(ReposService, "DeleteRepo"));

  const changing = API_SERVICES.flatMap((s) => s.methods.filter((m) => m.idempotency !== MethodOptions_IdempotencyLevel.NO_SIDE_EFFECTS).map((m) => `${s.typeName}/${m.name}`));
  const missing = changing.filter((m) => !walked.has(m) && !(m in NOT_WALKED));
  assert.deepEqual(missing, [], "every changing RPC is walked (or listed in NOT_WALKED with a reason)");
});
