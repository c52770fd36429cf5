import assert from "node:assert/strict";
import { generateKeyPairSync } from "node:crypto";
import { test } from "node:test";
import type { DescMessage, DescService, JsonObject } from "@bufbuild/protobuf";
import { MethodOptions_IdempotencyLevel } from "@bufbuild/protobuf/wkt";
import { SubscriptionsService } from "../../gen/platform/events/v2/subscriptions_service_pb.js";
import { AccountAssociationsService } from "../../gen/platform/iam/v2/account_associations_service_pb.js";
import { ExternalGroupRoleMappingsService } from "../../gen/platform/iam/v2/external_group_role_mappings_service_pb.js";
import { GroupInvitesService } from "../../gen/platform/iam/v2/group_invites_service_pb.js";
import { GroupsService } from "../../gen/platform/iam/v2/groups_service_pb.js";
import { PullTokensService } from "../../gen/platform/iam/v2/pull_tokens_service_pb.js";
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
import { RetentionPoliciesService } from "../../gen/platform/registry/v2/retention_policies_service_pb.js";
import { TrustService } from "../../gen/platform/registry/v2/trust_service_pb.js";
import { UpstreamsService } from "../../gen/platform/registry/v2/upstreams_service_pb.js";
import { TagsService } from "../../gen/platform/registry/v2/tags_service_pb.js";
import { isV1 } from "../../src/aip/v1/version.js";
import { builtInRole } from "../../src/access/capabilities.js";
import { Auth } from "../../gen/platform/auth/v1/auth_pb.js";
import { serverWidePersonUid } from "../../src/access/person-token.js";
import { API_SERVICES } from "../../src/server/domains.js";
import { event_type } from "../../gen/platform/common/v1/events_pb.js";
import { fromJson, getOption } from "@bufbuild/protobuf";
import { eventType } from "../../src/interceptors/event-interceptor.js";
import { eventBody } from "../../src/domains/events/event-body.js";
import { newChildUid } from "../../src/aip/uidp.js";
import { insertIdentity } from "../../src/domains/iam/store/identities.js";
import { serveOverWires } from "../support/over-wires.js";
import { methodOf } from "../support/wires.js";

/**
 * Every RPC that changes something writes its event: this walks every such RPC of every
 * domain (the list is read from the served services, so a new one fails here until it is
 * walked) and checks that each successful call left exactly one event of its type and subject,
 * whose body is what the call answered (the created or updated resource, with its uid) or, for
 * a Delete, its request (the uid), with no secret in it.
 */
const { server, wire } = serveOverWires({ events: { allowLocalSinks: true } });

/** v1 changing RPCs v2 has no twin for: their event's body is their own answer. */
const V1_WITHOUT_TWIN = new Set(["platform.registry.v1.Registry/UpdateTag", "platform.auth.v1.Auth/Register"]);

/** Changing RPCs not walked here, each with the reason. */
const NOT_WALKED: Record<string, string> = {};

/** An answer as its event carries it: without the fields no event carries (secrets, INPUT_ONLY). */
/**
 * An answer (canonical proto JSON, as the wires give it) as its event writes it: the one rendering
 * (`messageJson`), without the fields no event carries (secret and input-only ones, at any depth).
 */
function asInEvent(desc: DescMessage, answer: JsonObject): JsonObject {
  return eventBody(desc, fromJson(desc, answer));
}

/** A new identity of the organization with no binding, and its token. */
async function newcomer(): Promise<string> {
  const uid = newChildUid(server().org.uid);
  const now = Date.now();
  await insertIdentity(server().store.db, { uid, group_uid: server().org.uid, name: "newcomer", description: "", claim_match: "", static_keys: "", last_seen_time: null, create_time: now, update_time: now });
  return (await server().server.tokens.issue({ subject: uid, audience: "http://api.test" })).token;
}

test("every changing RPC of every domain writes one event of its type, about its resource, in its transaction", async () => {
  const walked = new Set<string>();
  const viewer = builtInRole("viewer").uid;
  const call = async (service: DescService, name: string, hostedType: string, request: JsonObject, subject?: (body: JsonObject) => string, token = server().ownerToken): Promise<JsonObject> => {
    const method = methodOf(service, name);
    const type = `dev.platform.api.${hostedType}.v1`;
    assert.equal(eventType("dev.platform", method), type, `${name} declares the hosted type`);
    const count = async () =>
      Number((await server().store.db.selectFrom("events").select((eb) => eb.fn.countAll<number>().as("n")).where("type", "=", type).executeTakeFirstOrThrow()).n);
    const before = await count();
    const out = await wire("connect").call(method, request, { method: "POST", path: "" }, token);
    assert.equal(out.code, 0, `${name}: ${out.message}`);
    assert.equal(await count(), before + 1, `${name} wrote one ${type} event`);
    const event = await server().store.db.selectFrom("events").selectAll().where("type", "=", type).orderBy("position", "desc").executeTakeFirstOrThrow();
    if (subject) assert.equal(event.subject, subject(out.body ?? {}), `${name}'s event is about its resource`);
    const body = JSON.parse(event.body) as JsonObject;
    const answersMessage = method.output.typeName !== "google.protobuf.Empty";
    if (isV1(service) && !V1_WITHOUT_TWIN.has(`${service.typeName}/${name}`)) {
      // The event of the v2 call it made: the v2 answer, or the v2 Delete's request.
      if (answersMessage) assert.match(event.body_type, /^platform\.[a-z]+\.v2\.\w+(?<!Request)$/, `${name}'s body is the answer of the v2 call it made`);
      else assert.match(event.body_type, /^platform\.[a-z]+\.v2\.Delete\w+Request$/, `${name}'s body is the request of the v2 Delete it made`);
    } else if (answersMessage) {
      assert.equal(event.body_type, method.output.typeName, `${name}'s body is its answer`);
      assert.deepEqual(body, asInEvent(method.output, out.body ?? {}), `${name}'s body is what it answered`);
    } else {
      assert.equal(event.body_type, method.input.typeName, `${name}'s body is its request (it answered Empty)`);
    }
    // A webhook receiver learns which resource changed from the body: a created, updated or deleted resource's uid.
    if (event.subject !== "" && !event.body_type.endsWith("Response")) assert.equal(body.uid ?? body.id ?? body.identity, event.subject, `${name}'s body carries the uid of its resource`);
    walked.add(`${service.typeName}/${name}`);
    return out.body ?? {};
  };
  const org = server().org.uid;
  const uid = (b: JsonObject) => b.uid as string;

  const group = uid(await call(GroupsService, "CreateGroup", "iam.group.created", { parent: org, group: { name: "coverage" } }, uid));
  await call(GroupsService, "UpdateGroup", "iam.group.updated", { group: { uid: group, description: "d" } }, () => group);
  const identity = uid(
    await call(IdentitiesService, "CreateIdentity", "iam.identity.created", { parent: group, identity: { name: "ci", claimMatch: { issuer: "https://issuer.example.com", subject: "s" } } }, uid),
  );
  await call(IdentitiesService, "UpdateIdentity", "iam.identity.updated", { identity: { uid: identity, description: "d" } }, () => identity);
  const pullToken = uid(await call(PullTokensService, "CreatePullToken", "iam.pull_token.created", { parent: group }, uid));
  const pullTokenEvent = await server().store.db.selectFrom("events").select("body").where("subject", "=", pullToken).executeTakeFirstOrThrow();
  assert.ok(!pullTokenEvent.body.includes("pap_"), "a pull token's password is not in its event");
  const role = uid(await call(RolesService, "CreateRole", "iam.roles.created", { parent: group, role: { name: "reader", capabilities: ["CAP_REPO_LIST"] } }, uid));
  await call(RolesService, "UpdateRole", "iam.roles.updated", { role: { uid: role, description: "d" } }, () => role);
  const binding = uid(await call(RoleBindingsService, "CreateRoleBinding", "iam.rolebindings.created", { parent: group, roleBinding: { identityUid: identity, roleUid: role } }, uid));
  await call(RoleBindingsService, "UpdateRoleBinding", "iam.rolebindings.updated", { roleBinding: { uid: binding, identityUid: identity, roleUid: viewer } }, () => binding);
  const provider = uid(
    await call(
      IdentityProvidersService,
      "CreateIdentityProvider",
      "iam.identity_providers.created",
      { parent: group, identityProvider: { name: "corp", oidc: { issuer: "https://login.example.com", clientId: "cid", clientSecret: "hidden" } } },
      uid,
    ),
  );
  const providerEvent = await server().store.db.selectFrom("events").select("body").where("subject", "=", provider).executeTakeFirstOrThrow();
  assert.ok(!providerEvent.body.includes("hidden"), "an INPUT_ONLY secret is not in the event");
  await call(IdentityProvidersService, "UpdateIdentityProvider", "iam.identity_providers.updated", { identityProvider: { uid: provider, oidc: { groupsClaim: "teams" } } }, () => provider);
  const mapping = uid(
    await call(ExternalGroupRoleMappingsService, "CreateExternalGroupRoleMapping", "iam.external_group_role_mappings.created", { parent: provider, externalGroupRoleMapping: { externalGroupId: "admins", roleUid: viewer } }, uid),
  );
  await call(ExternalGroupRoleMappingsService, "UpdateExternalGroupRoleMapping", "iam.external_group_role_mappings.updated", { externalGroupRoleMapping: { uid: mapping, externalGroupId: "admins", roleUid: role } }, () => mapping);
  await call(AccountAssociationsService, "CreateAccountAssociation", "iam.account_associations.created", { parent: group, accountAssociation: { name: "cloud", amazon: { account: "123456789012" } } }, () => group);
  await call(AccountAssociationsService, "UpdateAccountAssociation", "iam.account_associations.updated", { accountAssociation: { uid: group, description: "d" } }, () => group);
  const made = await call(GroupInvitesService, "CreateGroupInvite", "iam.group_invite.created", { parent: group, groupInvite: { roleUid: viewer, ttl: "3600s" } }, uid);
  const invite = uid(made);
  const code = made.code as string;
  assert.ok(code, "the invite's code is answered once");
  const inviteEvent = await server().store.db.selectFrom("events").select("body").where("subject", "=", invite).executeTakeFirstOrThrow();
  assert.ok(!inviteEvent.body.includes(code), "an invite's code is in no event");
  assert.equal((JSON.parse(inviteEvent.body) as JsonObject).expirationTime, made.expirationTime, "the invite's event carries what a Get shows");
  const redeemed = await call(GroupInvitesService, "RedeemGroupInvite", "iam.group_invite.redeemed", { code }, (b) => b.roleBindingUid as string, await newcomer());
  assert.equal(redeemed.groupUid, group);
  // A person signed in through the server-wide login, not registered yet, registers by an invite (POST /auth/v1/register).
  const person = { iss: "https://login.example.com", sub: "ada", idp: "" };
  const personUid = serverWidePersonUid({ issuer: person.iss, subject: person.sub });
  const personToken = (await server().server.tokens.issue({ subject: personUid, audience: "http://api.test", claims: { person } })).token;
  const second = await call(GroupInvitesService, "CreateGroupInvite", "iam.group_invite.created", { parent: org, groupInvite: { roleUid: viewer, ttl: "3600s" } }, uid);
  const session = await call(Auth, "Register", "auth.registered", { code: second.code as string }, (b) => b.identity as string, personToken);
  assert.deepEqual(session, { identity: personUid, group: org });
  const redeemEvent = await server().store.db.selectFrom("events").select(["body", "body_type"]).where("type", "=", "dev.platform.api.iam.group_invite.redeemed.v1").executeTakeFirstOrThrow();
  assert.ok(!redeemEvent.body.includes(code), "the code a caller redeems is in no event");
  await call(GroupInvitesService, "UpdateGroupInvite", "iam.group_invite.updated", { groupInvite: { uid: invite, email: "new@example.com" } }, () => invite);
  await call(TermsService, "AcceptTerms", "iam.terms.accepted", { group: org, documentIds: ["tos"] });
  const repo = uid(await call(ReposService, "CreateRepo", "platform.registry.repo.created", { parent: group, repo: { name: "coverage/app" } }, uid));
  await call(ReposService, "UpdateRepo", "platform.registry.repo.updated", { repo: { uid: repo, description: "d" } }, () => repo);
  await call(ReposService, "UpdateRepoReadme", "platform.registry.repo.updated", { repoReadme: { uid: repo, content: "# hi" } }, () => repo);
  const tag = uid(await call(TagsService, "CreateTag", "platform.registry.tag.created", { parent: repo, tag: { name: "v1", digest: `sha256:${"b".repeat(64)}` } }, uid));
  await call(TagsService, "DeleteTag", "platform.registry.tag.deleted", { uid: tag }, () => tag);
  await call(ReposService, "DeleteRepo", "platform.registry.repo.deleted", { uid: repo }, () => repo);
  const policy = uid(await call(RetentionPoliciesService, "CreateRetentionPolicy", "platform.registry.retention_policy.created", { parent: group, retentionPolicy: { keepLast: 5 } }, uid));
  await call(RetentionPoliciesService, "UpdateRetentionPolicy", "platform.registry.retention_policy.updated", { retentionPolicy: { uid: policy, keepLast: 6 } }, () => policy);
  await call(RetentionPoliciesService, "DeleteRetentionPolicy", "platform.registry.retention_policy.deleted", { uid: policy }, () => policy);
  const publicKeyPem = generateKeyPairSync("ec", { namedCurve: "prime256v1" }).publicKey.export({ type: "spki", format: "pem" }).toString();
  const trustedKey = uid(await call(TrustService, "CreateTrustedKey", "platform.registry.trusted_key.created", { parent: group, trustedKey: { name: "ci", publicKeyPem } }, uid));
  await call(TrustService, "UpdateTrustedKey", "platform.registry.trusted_key.updated", { trustedKey: { uid: trustedKey, description: "d" } }, () => trustedKey);
  await call(TrustService, "DeleteTrustedKey", "platform.registry.trusted_key.deleted", { uid: trustedKey }, () => trustedKey);
  await call(TrustService, "UpdateTrustPolicy", "platform.registry.trust_policy.updated", { trustPolicy: { uid: group, mode: "MODE_WARN" } }, () => group);
  const upstream = uid(
    await call(UpstreamsService, "CreateUpstream", "platform.registry.upstream.created", { parent: org, upstream: { name: "hub", url: "https://registry.example.com", repoPrefix: "mirror/", username: "u", password: "hidden-upstream" } }, uid),
  );
  const upstreamEvent = await server().store.db.selectFrom("events").select("body").where("subject", "=", upstream).executeTakeFirstOrThrow();
  assert.ok(!upstreamEvent.body.includes("hidden-upstream"), "an upstream's password is in no event");
  await call(UpstreamsService, "UpdateUpstream", "platform.registry.upstream.updated", { upstream: { uid: upstream, name: "hub two" } }, () => upstream);
  await call(UpstreamsService, "DeleteUpstream", "platform.registry.upstream.deleted", { uid: upstream }, () => upstream);
  const subscription = uid(await call(SubscriptionsService, "CreateSubscription", "events.subscription.created", { parent: group, subscription: { sink: "http://127.0.0.1:9/" } }, uid));
  await call(SubscriptionsService, "DeleteSubscription", "events.subscription.deleted", { uid: subscription }, () => subscription);
  await call(GroupInvitesService, "DeleteGroupInvite", "iam.group_invite.deleted", { uid: invite }, () => invite);
  await call(ExternalGroupRoleMappingsService, "DeleteExternalGroupRoleMapping", "iam.external_group_role_mappings.deleted", { uid: mapping }, () => mapping);
  await call(IdentityProvidersService, "DeleteIdentityProvider", "iam.identity_providers.deleted", { uid: provider }, () => provider);
  await call(AccountAssociationsService, "DeleteAccountAssociation", "iam.account_associations.deleted", { uid: group }, () => group);
  await call(RoleBindingsService, "DeleteRoleBinding", "iam.rolebindings.deleted", { uid: binding }, () => binding);
  const redeemedBinding = redeemed.roleBindingUid as string;
  await call(RoleBindingsService, "DeleteRoleBinding", "iam.rolebindings.deleted", { uid: redeemedBinding }, () => redeemedBinding);
  await call(RolesService, "DeleteRole", "iam.roles.deleted", { uid: role }, () => role);
  await call(IdentitiesService, "DeleteIdentity", "iam.identity.deleted", { uid: identity }, () => identity);
  await call(IdentitiesService, "DeleteIdentity", "iam.identity.deleted", { uid: pullToken }, () => pullToken);
  await call(GroupsService, "DeleteGroup", "iam.group.deleted", { uid: group }, () => group);

  // v1 writes: the events of the v2 calls they make (the same declared type, and subject).
  const id = (b: JsonObject) => b.id as string;
  const g1 = id(await call(GroupsV1, "Create", "iam.group.created", { parent: org, group: { name: "coverage-v1" } }, id));
  await call(GroupsV1, "Update", "iam.group.updated", { id: g1, name: "coverage-v1", description: "d" }, () => g1);
  const i1 = id(await call(IdentitiesV1, "Create", "iam.identity.created", { parentId: g1, identity: { name: "ci", claimMatch: { issuer: "https://issuer.example.com", subject: "s" } } }, id));
  await call(IdentitiesV1, "Update", "iam.identity.updated", { id: i1, name: "ci", claimMatch: { issuer: "https://issuer.example.com", subject: "t" } }, () => i1);
  const r1 = id(await call(RolesV1, "Create", "iam.roles.created", { parentId: g1, role: { name: "reader", capabilities: ["CAP_REPO_LIST"] } }, id));
  await call(RolesV1, "Update", "iam.roles.updated", { id: r1, name: "reader", capabilities: ["CAP_TAG_LIST"] }, () => r1);
  const b1 = id(await call(RoleBindingsV1, "Create", "iam.rolebindings.created", { parent: g1, roleBinding: { identity: i1, role: r1 } }, id));
  await call(RoleBindingsV1, "Update", "iam.rolebindings.updated", { id: b1, identity: i1, role: viewer }, () => b1);
  await call(RoleBindingsV1, "Delete", "iam.rolebindings.deleted", { id: b1 }, () => b1);
  const oidc = { issuer: "https://login.example.com", clientId: "cid", clientSecret: "hidden-v1" };
  const p1 = id(await call(IdentityProvidersV1, "Create", "iam.identity_providers.created", { parentId: g1, identityProvider: { name: "corp", oidc } }, id));
  const p1Event = await server().store.db.selectFrom("events").select(["body", "body_type"]).where("subject", "=", p1).executeTakeFirstOrThrow();
  assert.ok(!p1Event.body.includes("hidden-v1"), "an INPUT_ONLY secret is not in a v1 call's event");
  assert.equal(p1Event.body_type, "platform.iam.v2.IdentityProvider", "a v1 call's event carries the v2 answer");
  await call(IdentityProvidersV1, "Update", "iam.identity_providers.updated", { id: p1, name: "corp", oidc: { issuer: oidc.issuer, clientId: "cid2" } }, () => p1);
  const m1 = id(await call(ExternalGroupRoleMappingsV1, "Create", "iam.external_group_role_mappings.created", { parentId: p1, mapping: { externalGroupId: "admins", roleUidp: viewer } }, id));
  await call(ExternalGroupRoleMappingsV1, "Delete", "iam.external_group_role_mappings.deleted", { id: m1 }, () => m1);
  await call(IdentityProvidersV1, "Delete", "iam.identity_providers.deleted", { id: p1 }, () => p1);
  const group1 = (b: JsonObject) => b.group as string;
  await call(AccountAssociationsV1, "Create", "iam.account_associations.created", { group: g1, name: "cloud", amazon: { account: "123456789012" } }, group1);
  await call(AccountAssociationsV1, "Update", "iam.account_associations.updated", { group: g1, name: "cloud", amazon: { account: "210987654321" } }, () => g1);
  await call(AccountAssociationsV1, "Delete", "iam.account_associations.deleted", { group: g1 }, () => g1);
  const n1 = id(await call(GroupInvitesV1, "Create", "iam.group_invite.created", { group: g1, role: viewer, ttl: "3600s" }, id));
  await call(GroupInvitesV1, "Delete", "iam.group_invite.deleted", { id: n1 }, () => n1);
  await call(TermsV1, "AcceptTerms", "iam.terms.accepted", { group: org, documentIds: ["tos"] });
  await call(RolesV1, "Delete", "iam.roles.deleted", { id: r1 }, () => r1);
  await call(IdentitiesV1, "Delete", "iam.identity.deleted", { id: i1 }, () => i1);
  await call(GroupsV1, "Delete", "iam.group.deleted", { id: g1 }, () => g1);
  const repo1 = id(await call(RegistryV1, "CreateRepo", "platform.registry.repo.created", { parentId: org, repo: { name: "coverage/v1" } }, id));
  // A v1 PUT of a repo (with its readme) writes in one transaction: the v2 Update's event type.
  await call(RegistryV1, "UpdateRepo", "platform.registry.repo.updated", { id: repo1, name: "coverage/v1", readme: "# v1" }, () => repo1);
  const tag1 = id(await call(RegistryV1, "CreateTag", "platform.registry.tag.created", { repoId: repo1, tag: { name: "v1", digest: `sha256:${"b".repeat(64)}` } }, id));
  // v2 has no UpdateTag: the v1 one writes the hosted `tag.updated` type.
  await call(RegistryV1, "UpdateTag", "platform.registry.tag.updated", { id: tag1, name: "v1", digest: `sha256:${"c".repeat(64)}` }, () => tag1);
  await call(RegistryV1, "DeleteTag", "platform.registry.tag.deleted", { id: tag1 }, () => tag1);
  await call(RegistryV1, "DeleteRepo", "platform.registry.repo.deleted", { id: repo1 }, () => repo1);

  const changing = API_SERVICES.flatMap((s) => s.methods.filter((m) => m.idempotency !== MethodOptions_IdempotencyLevel.NO_SIDE_EFFECTS).map((m) => `${s.typeName}/${m.name}`));
  const missing = changing.filter((m) => !walked.has(m) && !(m in NOT_WALKED));
  assert.deepEqual(missing, [], "every changing RPC is walked (or listed in NOT_WALKED with a reason)");
});

test("every changing RPC declares its event type (platform.common.v1.event_type) as <domain>.<resource>.<verb>", () => {
  // The hosted service names its registration event with two segments (`auth.registered`).
  const twoSegments = new Set(["platform.auth.v1.Auth/Register"]);
  const undeclared = API_SERVICES.flatMap((s) =>
    s.methods
      .filter((m) => m.idempotency !== MethodOptions_IdempotencyLevel.NO_SIDE_EFFECTS && !twoSegments.has(`${s.typeName}/${m.name}`) && !/^[a-z_]+(\.[a-z_]+){2,}$/.test(getOption(m, event_type)))
      .map((m) => `${s.typeName}/${m.name}`),
  );
  assert.deepEqual(undeclared, []);
});
