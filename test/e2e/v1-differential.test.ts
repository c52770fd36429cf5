import { after, before } from "node:test";
import type { JsonObject } from "@bufbuild/protobuf";
import { Groups } from "../../gen/platform/iam/v1/group_pb.js";
import { Identities } from "../../gen/platform/iam/v1/identity_pb.js";
import { RoleBindings } from "../../gen/platform/iam/v1/role_binding_pb.js";
import { Roles } from "../../gen/platform/iam/v1/role_pb.js";
import { GroupsService } from "../../gen/platform/iam/v2/groups_service_pb.js";
import { IdentitiesService } from "../../gen/platform/iam/v2/identities_service_pb.js";
import { RoleBindingsService } from "../../gen/platform/iam/v2/role_bindings_service_pb.js";
import { RolesService } from "../../gen/platform/iam/v2/roles_service_pb.js";
import { builtInRole } from "../../src/auth/capabilities.js";
import { startTestServer, type TestServer } from "../support/test-server.js";
import { defined, describeDifferential, rest, type DifferentialKind } from "../support/v1-differential.js";
import { allWires, connectWire, type Wire } from "../support/wires.js";

/**
 * IAM through v1 and v2 on the same store: every IAM kind both versions have, on every wire
 * (test/support/v1-differential.ts). Other domains add their kinds in their own file.
 */
let server: TestServer;
let wires: Wire[];
let setupWire: Wire;
before(async () => {
  server = await startTestServer();
  wires = allWires(server.apiPort);
  setupWire = connectWire(server.apiPort);
});
after(async () => {
  for (const wire of [...wires, setupWire]) wire.close();
  await server.close();
});

const str = (v: unknown) => (v === undefined ? undefined : String(v));
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
        const role = { name: "reader", description: "reads", capabilities: ["CAP_REPO_LIST", "CAP_TAG_LIST"] };
        return { service: Roles, method: "Create", request: { parentId: parent, role }, rest: rest("POST", `/iam/v1/roles/${parent}`, role) };
      },
      update: (_s, created) => {
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
    toV1: (r) => defined({ id: r.uid, name: r.name, description: r.description, capabilities: r.capabilities }),
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
];

describeDifferential({ title: "IAM v1/v2", kinds: IAM_KINDS, server: () => server, wires: () => wires, setupWire: () => setupWire });
