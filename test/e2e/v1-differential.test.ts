import type { JsonObject } from "@bufbuild/protobuf";
import assert from "node:assert/strict";
import { GroupAccountAssociations } from "../../gen/platform/iam/v1/account_associations_pb.js";
import { ExternalGroupRoleMappings } from "../../gen/platform/iam/v1/external_group_role_mappings_pb.js";
import { Groups } from "../../gen/platform/iam/v1/group_pb.js";
import { GroupInvites } from "../../gen/platform/iam/v1/group_invites_pb.js";
import { IdentityProviders } from "../../gen/platform/iam/v1/identity_providers_pb.js";
import { Identities } from "../../gen/platform/iam/v1/identity_pb.js";
import { RoleBindings } from "../../gen/platform/iam/v1/role_binding_pb.js";
import { Roles } from "../../gen/platform/iam/v1/role_pb.js";
import { AccountAssociationsService } from "../../gen/platform/iam/v2/account_associations_service_pb.js";
import { ExternalGroupRoleMappingsService } from "../../gen/platform/iam/v2/external_group_role_mappings_service_pb.js";
import { GroupInvitesService } from "../../gen/platform/iam/v2/group_invites_service_pb.js";
import { GroupsService } from "../../gen/platform/iam/v2/groups_service_pb.js";
import { IdentityProvidersService } from "../../gen/platform/iam/v2/identity_providers_service_pb.js";
import { IdentitiesService } from "../../gen/platform/iam/v2/identities_service_pb.js";
import { RoleBindingsService } from "../../gen/platform/iam/v2/role_bindings_service_pb.js";
import { RolesService } from "../../gen/platform/iam/v2/roles_service_pb.js";
import { builtInRole, capabilityOfString, capabilityString } from "../../src/access/capabilities.js";
import { defined, describeDifferentialOnEveryDatabase, rest, type DifferentialKind } from "../support/v1-differential.js";

/**
 * IAM through v1 and v2 on the same store: every IAM kind both versions have, on every wire
 * and on SQLite and PostgreSQL (test/support/v1-differential.ts). Other domains add their
 * kinds in their own file.
 */

const str = (v: unknown) => (v === undefined ? undefined : String(v));
/** v2 capability names (`CAP_REPO_LIST`) as v1 shows them (`repo.list`). */
const v1Caps = (caps: unknown) => (caps as string[] | undefined)?.map((c) => capabilityString(capabilityOfString(c)!));
const ISSUER = "https://issuer.example.com";

const IAM_KINDS: DifferentialKind[] = [
  {
    name: "group",
    setup: async (_h, group) => ({ parent: group }),
    v1: {
      create: ({ parent }) => {
        const group = { name: "team", description: "the team" };
        return { service: Groups, method: "Create", request: { parent, group }, rest: rest("POST", `/iam/v1/groups/${parent}`, group) };
      },
      // PUT without `description`: it is reset.
      update: (_s, created) => {
        const body = { id: created.id as string, name: "renamed" };
        return { service: Groups, method: "Update", request: body, rest: rest("PUT", `/iam/v1/groups/${body.id}`, body) };
      },
      list: (id) => ({ service: Groups, method: "List", request: { id }, rest: rest("GET", `/iam/v1/groups?id=${id}`) }),
      delete: (id) => ({ service: Groups, method: "Delete", request: { id }, rest: rest("DELETE", `/iam/v1/groups/${id}`) }),
    },
    v2: {
      create: ({ parent }) => {
        const group = { name: "team", description: "the team" };
        return { service: GroupsService, method: "CreateGroup", request: { parent, group }, rest: rest("POST", `/iam/v2/groups/${parent}`, group) };
      },
      update: (_s, created) => {
        const group = { uid: created.uid as string, description: "changed" };
        return { service: GroupsService, method: "UpdateGroup", request: { group }, rest: rest("PATCH", `/iam/v2/groups/${group.uid}`, group) };
      },
      get: (uid) => ({ service: GroupsService, method: "GetGroup", request: { uid }, rest: rest("GET", `/iam/v2/groups/${uid}`) }),
      delete: (uid) => ({ service: GroupsService, method: "DeleteGroup", request: { uid }, rest: rest("DELETE", `/iam/v2/groups/${uid}`) }),
    },
    toV1: (g) => defined({ id: g.uid, name: g.name, description: g.description }),
  },
  {
    name: "identity",
    setup: async (_h, group) => ({ parent: group }),
    v1: {
      create: ({ parent }) => {
        const identity = { name: "ci", description: "CI", claim_match: { issuer: ISSUER, subject: "repo:acme/app" } };
        return { service: Identities, method: "Create", request: { parent_id: parent, identity }, rest: rest("POST", `/iam/v1/identities/${parent}`, identity) };
      },
      update: (_s, created) => {
        const body = { id: created.id as string, name: "ci", claimMatch: { issuer: ISSUER, subjectPattern: "repo:acme/.*" } };
        return { service: Identities, method: "Update", request: body, rest: rest("PUT", `/iam/v1/identities/${body.id}`, body) };
      },
      list: (id) => ({ service: Identities, method: "List", request: { id }, rest: rest("GET", `/iam/v1/identities?id=${id}`) }),
      delete: (id) => ({ service: Identities, method: "Delete", request: { id }, rest: rest("DELETE", `/iam/v1/identities/${id}`) }),
    },
    v2: {
      create: ({ parent }) => {
        const identity = { name: "ci", description: "CI", claimMatch: { issuer: ISSUER, subject: "repo:acme/app" } };
        return { service: IdentitiesService, method: "CreateIdentity", request: { parent, identity }, rest: rest("POST", `/iam/v2/identities/${parent}`, identity) };
      },
      update: (_s, created) => {
        const identity = { uid: created.uid as string, description: "changed" };
        return { service: IdentitiesService, method: "UpdateIdentity", request: { identity }, rest: rest("PATCH", `/iam/v2/identities/${identity.uid}`, identity) };
      },
      get: (uid) => ({ service: IdentitiesService, method: "GetIdentity", request: { uid }, rest: rest("GET", `/iam/v2/identities/${uid}`) }),
      delete: (uid) => ({ service: IdentitiesService, method: "DeleteIdentity", request: { uid }, rest: rest("DELETE", `/iam/v2/identities/${uid}`) }),
    },
    toV1: (i) => {
      assert.ok(i.lastSeenTime, "an identity always shows lastSeenTime (the create time until an exchange)");
      const keys = i.staticKeys as JsonObject | undefined;
      return defined({
        id: i.uid,
        name: i.name,
        description: i.description,
        createdAt: i.createTime,
        updatedAt: i.updateTime,
        lastSeen: i.lastSeenTime,
        claimMatch: i.claimMatch,
        static: keys && defined({ issuer: keys.issuer, subject: keys.subject, issuerKeys: keys.issuerKeys, expiration: keys.expirationTime }),
      });
    },
  },
  {
    name: "role",
    setup: async (_h, group) => ({ parent: group }),
    v1: {
      create: ({ parent }) => {
        const role = { name: "reader", description: "reads", capabilities: ["repo.list", "tag.list"] };
        return { service: Roles, method: "Create", request: { parentId: parent, role }, rest: rest("POST", `/iam/v1/roles/${parent}`, role) };
      },
      update: (_s, created) => {
        // Input also takes the enum names.
        const body = { id: created.id as string, name: "reader", capabilities: ["CAP_REPO_LIST"] };
        return { service: Roles, method: "Update", request: body, rest: rest("PUT", `/iam/v1/roles/${body.id}`, body) };
      },
      list: (id) => ({ service: Roles, method: "List", request: { id }, rest: rest("GET", `/iam/v1/roles?id=${id}`) }),
      delete: (id) => ({ service: Roles, method: "Delete", request: { id }, rest: rest("DELETE", `/iam/v1/roles/${id}`) }),
    },
    v2: {
      create: ({ parent }) => {
        const role = { name: "reader", description: "reads", capabilities: ["CAP_REPO_LIST"] };
        return { service: RolesService, method: "CreateRole", request: { parent, role }, rest: rest("POST", `/iam/v2/roles/${parent}`, role) };
      },
      update: (_s, created) => {
        const role = { uid: created.uid as string, capabilities: ["CAP_REPO_LIST", "CAP_TAG_LIST"] };
        return { service: RolesService, method: "UpdateRole", request: { role }, rest: rest("PATCH", `/iam/v2/roles/${role.uid}`, role) };
      },
      get: (uid) => ({ service: RolesService, method: "GetRole", request: { uid }, rest: rest("GET", `/iam/v2/roles/${uid}`) }),
      delete: (uid) => ({ service: RolesService, method: "DeleteRole", request: { uid }, rest: rest("DELETE", `/iam/v2/roles/${uid}`) }),
    },
    toV1: (r) => defined({ id: r.uid, name: r.name, description: r.description, capabilities: v1Caps(r.capabilities) }),
  },
  {
    name: "role binding",
    setup: async (h, group) => {
      const identity = { name: "bound", claimMatch: { issuer: ISSUER, subject: "bound" } };
      const created = await h.ok({ service: IdentitiesService, method: "CreateIdentity", request: { parent: group, identity }, rest: rest("POST", `/iam/v2/identities/${group}`, identity) });
      const role = { name: "puller", capabilities: ["CAP_REPO_LIST"] };
      const custom = await h.ok({ service: RolesService, method: "CreateRole", request: { parent: group, role }, rest: rest("POST", `/iam/v2/roles/${group}`, role) });
      return { parent: group, identity: created.uid as string, role: custom.uid as string };
    },
    v1: {
      create: (s) => {
        const roleBinding = { identity: s.identity, role: s.role };
        return { service: RoleBindings, method: "Create", request: { parent: s.parent, roleBinding }, rest: rest("POST", `/iam/v1/rolebindings/${s.parent}`, roleBinding) };
      },
      update: (s, created) => {
        const body = { id: created.id as string, identity: s.identity, role: builtInRole("viewer").uid };
        return { service: RoleBindings, method: "Update", request: body, rest: rest("PUT", `/iam/v1/rolebindings/${body.id}`, body) };
      },
      list: (id) => ({ service: RoleBindings, method: "List", request: { id }, rest: rest("GET", `/iam/v1/rolebindings?id=${id}`) }),
      delete: (id) => ({ service: RoleBindings, method: "Delete", request: { id }, rest: rest("DELETE", `/iam/v1/rolebindings/${id}`) }),
    },
    v2: {
      create: (s) => {
        const roleBinding = { identityUid: s.identity, roleUid: s.role };
        return { service: RoleBindingsService, method: "CreateRoleBinding", request: { parent: s.parent, roleBinding }, rest: rest("POST", `/iam/v2/roleBindings/${s.parent}`, roleBinding) };
      },
      update: (s, created) => {
        const roleBinding = { uid: created.uid as string, identityUid: s.identity, roleUid: builtInRole("viewer").uid };
        return { service: RoleBindingsService, method: "UpdateRoleBinding", request: { roleBinding }, rest: rest("PATCH", `/iam/v2/roleBindings/${roleBinding.uid}`, roleBinding) };
      },
      get: (uid) => ({ service: RoleBindingsService, method: "GetRoleBinding", request: { uid }, rest: rest("GET", `/iam/v2/roleBindings/${uid}`) }),
      delete: (uid) => ({ service: RoleBindingsService, method: "DeleteRoleBinding", request: { uid }, rest: rest("DELETE", `/iam/v2/roleBindings/${uid}`) }),
    },
    toV1: (b) =>
      defined({
        id: b.uid,
        identity: str((b.identity as JsonObject | undefined)?.uid),
        group: str((b.group as JsonObject | undefined)?.uid),
        role: str((b.role as JsonObject | undefined)?.uid),
        createdAt: b.createTime,
      }),
  },
  {
    name: "identity provider",
    setup: async (_h, group) => ({ parent: group }),
    v1: {
      create: ({ parent }) => {
        const identityProvider = { name: "corp", description: "SSO", defaultRole: builtInRole("viewer").uid, oidc: { issuer: "https://login.example.com", clientId: "cid", clientSecret: "s3cret", additionalScopes: ["email"], groupsClaim: "groups" } };
        return { service: IdentityProviders, method: "Create", request: { parentId: parent, identityProvider }, rest: rest("POST", `/iam/v1/identityProviders/${parent}`, identityProvider) };
      },
      // PUT without description, default role or scopes: they are reset (the secret is kept).
      update: (_s, created) => {
        const body = { id: created.id as string, name: "corp2", oidc: { issuer: "https://login.example.com", clientId: "cid2" } };
        return { service: IdentityProviders, method: "Update", request: body, rest: rest("PUT", `/iam/v1/identityProviders/${body.id}`, body) };
      },
      list: (id) => ({ service: IdentityProviders, method: "List", request: { id }, rest: rest("GET", `/iam/v1/identityProviders?id=${id}`) }),
      delete: (id) => ({ service: IdentityProviders, method: "Delete", request: { id }, rest: rest("DELETE", `/iam/v1/identityProviders/${id}`) }),
    },
    v2: {
      create: ({ parent }) => {
        const identityProvider = { name: "corp", oidc: { issuer: "https://login.example.com", clientId: "cid", clientSecret: "s3cret" } };
        return { service: IdentityProvidersService, method: "CreateIdentityProvider", request: { parent, identityProvider }, rest: rest("POST", `/iam/v2/identityProviders/${parent}`, identityProvider) };
      },
      update: (_s, created) => {
        const identityProvider = { uid: created.uid as string, description: "changed", oidc: { groupsClaim: "teams" } };
        return {
          service: IdentityProvidersService,
          method: "UpdateIdentityProvider",
          request: { identityProvider },
          rest: rest("PATCH", `/iam/v2/identityProviders/${identityProvider.uid}`, identityProvider),
        };
      },
      get: (uid) => ({ service: IdentityProvidersService, method: "GetIdentityProvider", request: { uid }, rest: rest("GET", `/iam/v2/identityProviders/${uid}`) }),
      delete: (uid) => ({ service: IdentityProvidersService, method: "DeleteIdentityProvider", request: { uid }, rest: rest("DELETE", `/iam/v2/identityProviders/${uid}`) }),
    },
    toV1: (p) => defined({ id: p.uid, name: p.name, description: p.description, defaultRole: p.defaultRole, oidc: p.oidc }),
  },
  {
    name: "account association",
    v1Id: "group",
    setup: async (_h, group) => ({ parent: group }),
    v1: {
      create: ({ parent }) => {
        const body = { group: parent, name: "clouds", amazon: { account: "123456789012" }, google: { projectId: "acme-prod", projectNumber: "424242424242" } };
        return { service: GroupAccountAssociations, method: "Create", request: body, rest: rest("POST", `/iam/v1/account_associations/${parent}`, body) };
      },
      // PUT without google: that association is removed.
      update: ({ parent }) => {
        const body = { group: parent, name: "clouds", amazon: { account: "210987654321" } };
        return { service: GroupAccountAssociations, method: "Update", request: body, rest: rest("PUT", `/iam/v1/account_associations/${parent}`, body) };
      },
      list: (group) => ({ service: GroupAccountAssociations, method: "List", request: { group }, rest: rest("GET", `/iam/v1/account_associations?group=${group}`) }),
      delete: (group) => ({ service: GroupAccountAssociations, method: "Delete", request: { group }, rest: rest("DELETE", `/iam/v1/account_associations/${group}`) }),
    },
    v2: {
      create: ({ parent }) => {
        const accountAssociation = { name: "clouds", azure: { tenantId: "00000000-0000-4000-8000-000000000001", clientIds: { app: "00000000-0000-4000-8000-000000000002" } } };
        return {
          service: AccountAssociationsService,
          method: "CreateAccountAssociation",
          request: { parent, accountAssociation },
          rest: rest("POST", `/iam/v2/accountAssociations/${parent}`, accountAssociation),
        };
      },
      update: (_s, created) => {
        const accountAssociation = { uid: created.uid as string, description: "changed", amazon: { account: "123456789012" } };
        return {
          service: AccountAssociationsService,
          method: "UpdateAccountAssociation",
          request: { accountAssociation },
          rest: rest("PATCH", `/iam/v2/accountAssociations/${accountAssociation.uid}`, accountAssociation),
        };
      },
      get: (uid) => ({ service: AccountAssociationsService, method: "GetAccountAssociation", request: { uid }, rest: rest("GET", `/iam/v2/accountAssociations/${uid}`) }),
      delete: (uid) => ({ service: AccountAssociationsService, method: "DeleteAccountAssociation", request: { uid }, rest: rest("DELETE", `/iam/v2/accountAssociations/${uid}`) }),
    },
    toV1: (a) => defined({ group: a.uid, name: a.name, description: a.description, amazon: a.amazon, google: a.google, azure: a.azure, github: a.github }),
  },
  {
    name: "group invite",
    setup: async (_h, group) => ({ parent: group }),
    v1: {
      create: ({ parent }) => {
        const body = { group: parent, ttl: "3600s", role: builtInRole("viewer").uid, email: "dev@example.com", singleUse: true };
        return { service: GroupInvites, method: "Create", request: body, rest: rest("POST", `/iam/v1/group_invites/${parent}`, body) };
      },
      list: (id) => ({ service: GroupInvites, method: "List", request: { id }, rest: rest("GET", `/iam/v1/group_invites?id=${id}`) }),
      delete: (id) => ({ service: GroupInvites, method: "Delete", request: { id }, rest: rest("DELETE", `/iam/v1/group_invites/${id}`) }),
    },
    v2: {
      create: ({ parent }) => {
        const groupInvite = { roleUid: builtInRole("viewer").uid, ttl: "7200s" };
        return { service: GroupInvitesService, method: "CreateGroupInvite", request: { parent, groupInvite }, rest: rest("POST", `/iam/v2/groupInvites/${parent}`, groupInvite) };
      },
      get: (uid) => ({ service: GroupInvitesService, method: "GetGroupInvite", request: { uid }, rest: rest("GET", `/iam/v2/groupInvites/${uid}`) }),
      delete: (uid) => ({ service: GroupInvitesService, method: "DeleteGroupInvite", request: { uid }, rest: rest("DELETE", `/iam/v2/groupInvites/${uid}`) }),
    },
    toV1: (i) => {
      const role = i.role as JsonObject;
      return defined({
        id: i.uid,
        expiration: i.expirationTime,
        role: defined({ id: role.uid, name: role.name, description: role.description, capabilities: v1Caps(role.capabilities) }),
        email: i.email,
        createdAt: i.createTime,
        singleUse: i.singleUse,
      });
    },
    createdAgrees: (created, v2) => {
      const listed = IAM_KINDS.find((k) => k.name === "group invite")!.toV1(v2);
      assert.match(String(created.code), /.{16,}/, "the code is shown on create");
      assert.deepEqual(created, defined({ id: listed.id, expiration: listed.expiration, role: listed.role, code: created.code }));
    },
  },
  {
    name: "external group role mapping",
    setup: async (h, group) => {
      const identityProvider = { name: "corp", oidc: { issuer: "https://login.example.com", clientId: "cid", clientSecret: "s3cret" } };
      const provider = await h.ok({
        service: IdentityProvidersService,
        method: "CreateIdentityProvider",
        request: { parent: group, identityProvider },
        rest: rest("POST", `/iam/v2/identityProviders/${group}`, identityProvider),
      });
      return { parent: provider.uid as string };
    },
    v1: {
      create: ({ parent }) => {
        const mapping = { externalGroupId: "admins", roleUidp: builtInRole("viewer").uid };
        return { service: ExternalGroupRoleMappings, method: "Create", request: { parentId: parent, mapping }, rest: rest("POST", `/iam/v1/externalGroupRoleMappings/${parent}`, mapping) };
      },
      list: (id) => ({ service: ExternalGroupRoleMappings, method: "List", request: { id }, rest: rest("GET", `/iam/v1/externalGroupRoleMappings?id=${id}`) }),
      delete: (id) => ({ service: ExternalGroupRoleMappings, method: "Delete", request: { id }, rest: rest("DELETE", `/iam/v1/externalGroupRoleMappings/${id}`) }),
    },
    v2: {
      create: ({ parent }) => {
        const externalGroupRoleMapping = { externalGroupId: "devs", roleUid: builtInRole("viewer").uid };
        return {
          service: ExternalGroupRoleMappingsService,
          method: "CreateExternalGroupRoleMapping",
          request: { parent, externalGroupRoleMapping },
          rest: rest("POST", `/iam/v2/externalGroupRoleMappings/${parent}`, externalGroupRoleMapping),
        };
      },
      update: (_s, created) => {
        const externalGroupRoleMapping = { uid: created.uid as string, externalGroupId: "ops", roleUid: builtInRole("editor").uid };
        return {
          service: ExternalGroupRoleMappingsService,
          method: "UpdateExternalGroupRoleMapping",
          request: { externalGroupRoleMapping },
          rest: rest("PATCH", `/iam/v2/externalGroupRoleMappings/${externalGroupRoleMapping.uid}`, externalGroupRoleMapping),
        };
      },
      get: (uid) => ({ service: ExternalGroupRoleMappingsService, method: "GetExternalGroupRoleMapping", request: { uid }, rest: rest("GET", `/iam/v2/externalGroupRoleMappings/${uid}`) }),
      delete: (uid) => ({
        service: ExternalGroupRoleMappingsService,
        method: "DeleteExternalGroupRoleMapping",
        request: { uid },
        rest: rest("DELETE", `/iam/v2/externalGroupRoleMappings/${uid}`),
      }),
    },
    toV1: (m) => defined({ id: m.uid, identityProviderUidp: m.identityProviderUid, externalGroupId: m.externalGroupId, roleUidp: m.roleUid, createdAt: m.createTime }),
  },
];

await describeDifferentialOnEveryDatabase("IAM v1/v2", IAM_KINDS);
