import assert from "node:assert/strict";
import { generateKeyPairSync } from "node:crypto";
import { describe, test } from "node:test";
import type { DescService, JsonObject, JsonValue } from "@bufbuild/protobuf";
import { AccountAssociationsService } from "../../gen/platform/iam/v2/account_associations_service_pb.js";
import { ExternalGroupRoleMappingsService } from "../../gen/platform/iam/v2/external_group_role_mappings_service_pb.js";
import { GroupInvitesService } from "../../gen/platform/iam/v2/group_invites_service_pb.js";
import { GroupsService } from "../../gen/platform/iam/v2/groups_service_pb.js";
import { IdentitiesService } from "../../gen/platform/iam/v2/identities_service_pb.js";
import { IdentityProvidersService } from "../../gen/platform/iam/v2/identity_providers_service_pb.js";
import { RoleBindingsService } from "../../gen/platform/iam/v2/role_bindings_service_pb.js";
import { RolesService } from "../../gen/platform/iam/v2/roles_service_pb.js";
import { ReposService } from "../../gen/platform/registry/v2/repos_service_pb.js";
import { RetentionPoliciesService } from "../../gen/platform/registry/v2/retention_policies_service_pb.js";
import { builtInRole } from "../../src/access/capabilities.js";
import { testDatabases } from "../support/databases.js";
import { serveOverWires } from "../support/over-wires.js";
import { methodOf, violatedFields, type Outcome } from "../support/wires.js";

/**
 * Every Update RPC, table-driven, over the four wires on SQLite and PostgreSQL (AIP-134): a field the
 * body sets changes when no mask is given (REST infers the mask from the body's leaves; the other
 * wires send no mask), a mask path changes exactly that field, a leaf inside a message field (a
 * oneof member's included) changes that leaf and keeps its siblings, a member of a oneof replaces
 * the other member, and a path that names no field is INVALID_ARGUMENT naming `update_mask`. No
 * case may answer OK and leave the resource as it was.
 */

const viewer = builtInRole("viewer").uid;
const editor = builtInRole("editor").uid;
const { publicKey } = generateKeyPairSync("ec", { namedCurve: "P-256" });
const jwks = JSON.stringify({ keys: [{ ...publicKey.export({ format: "jwk" }), kid: "k1", alg: "ES256", use: "sig" }] });

interface Case {
  title: string;
  /** The resource fields the PATCH body sets. */
  set: JsonObject;
  /** The update mask as a REST caller writes it (proto names, comma-separated); undefined: none. */
  mask?: string;
  /** What the resource shows afterwards (a subset; `null` for a field that must be absent). */
  expect?: JsonObject;
  /** The field an INVALID_ARGUMENT names. */
  refused?: string;
}

interface Table {
  resource: string;
  service: DescService;
  /** The REST collection path, e.g. `/iam/v2/groups`. */
  path: string;
  /** Makes a fresh resource for each case; its uid. `id` is unique to the case (repo names are unique in an organization). */
  create(make: Maker, id: string): Promise<string>;
  /** The REST path of its Get, when not `${path}/${uid}`. */
  getPath?(uid: string): string;
  cases: Case[];
}

/** Creates `resource` under `parent` (a case's own folder when "") with `body` over the wire; its uid. */
type Maker = (service: DescService, resource: string, path: string, parent: string, body: JsonObject) => Promise<string>;

const camel = (name: string) => name.replace(/_([a-z])/g, (_, c: string) => c.toUpperCase());
const requestField = (resource: string) => resource.charAt(0).toLowerCase() + resource.slice(1);

/** `actual` holds every field of `expected` (nested objects compared field by field; `null`: absent or empty). */
function assertHolds(actual: JsonValue | undefined, expected: JsonValue, where: string): void {
  if (expected === null) {
    assert.ok(actual === undefined || actual === null || actual === "" || (typeof actual === "object" && Object.keys(actual).length === 0), `${where} is ${JSON.stringify(actual)}, not absent`);
    return;
  }
  if (typeof expected === "object" && !Array.isArray(expected)) {
    assert.ok(actual && typeof actual === "object" && !Array.isArray(actual), `${where} is ${JSON.stringify(actual)}`);
    for (const [key, value] of Object.entries(expected)) assertHolds((actual as JsonObject)[key], value, `${where}.${key}`);
    return;
  }
  assert.deepEqual(actual, expected, where);
}

const TABLES: Table[] = [
  {
    resource: "Group",
    service: GroupsService,
    path: "/iam/v2/groups",
    create: (make) => make(GroupsService, "Group", "/iam/v2/groups", "", { name: "team", description: "first" }),
    cases: [
      { title: "no mask: the field the body sets", set: { description: "second" }, expect: { description: "second", name: "team" } },
      { title: "a mask names one field; the body's others are left", set: { name: "renamed", description: "ignored" }, mask: "name", expect: { name: "renamed", description: "first" } },
      { title: "a path that is no field", set: { name: "x" }, mask: "nmae", refused: "update_mask" },
    ],
  },
  {
    resource: "Identity",
    service: IdentitiesService,
    path: "/iam/v2/identities",
    create: (make) => make(IdentitiesService, "Identity", "/iam/v2/identities", "", { name: "ci", claimMatch: { issuer: "https://issuer.example", subject: "repo:a" } }),
    cases: [
      { title: "no mask: a claim match the body sets", set: { claimMatch: { issuer: "https://issuer.example", subject: "repo:b" } }, expect: { claimMatch: { issuer: "https://issuer.example", subject: "repo:b" } } },
      { title: "no mask: one leaf of the claim match", set: { claimMatch: { subject: "repo:c" } }, expect: { claimMatch: { issuer: "https://issuer.example", subject: "repo:c" } } },
      { title: "a leaf path inside the oneof member", set: { claimMatch: { subject: "repo:d", issuer: "https://ignored.example" } }, mask: "claim_match.subject", expect: { claimMatch: { issuer: "https://issuer.example", subject: "repo:d" } } },
      { title: "leaf paths in JSON names", set: { claimMatch: { subjectPattern: "repo:acme/.*" } }, mask: "claimMatch.subject,claimMatch.subjectPattern", expect: { claimMatch: { issuer: "https://issuer.example", subject: null, subjectPattern: "repo:acme/.*" } } },
      { title: "a map inside the oneof member", set: { claimMatch: { claims: { ref: "refs/heads/main" } } }, mask: "claim_match.claims", expect: { claimMatch: { subject: "repo:a", claims: { ref: "refs/heads/main" } } } },
      { title: "no mask: the other oneof member replaces the first", set: { staticKeys: { issuer: "https://keys.example", subject: "deployer", issuerKeys: jwks } }, expect: { staticKeys: { issuer: "https://keys.example", subject: "deployer" }, claimMatch: null } },
      { title: "the member named whole replaces it", set: { claimMatch: { issuer: "https://other.example", subject: "s" } }, mask: "claim_match", expect: { claimMatch: { issuer: "https://other.example", subject: "s", audience: null } } },
      { title: "a leaf path that is no field", set: { claimMatch: { subject: "x" } }, mask: "claim_match.subjcet", refused: "update_mask" },
    ],
  },
  {
    resource: "Role",
    service: RolesService,
    path: "/iam/v2/roles",
    create: (make) => make(RolesService, "Role", "/iam/v2/roles", "", { name: "lister", capabilities: ["CAP_IAM_GROUPS_LIST"] }),
    cases: [
      { title: "no mask: a repeated field is replaced", set: { capabilities: ["CAP_IAM_ROLES_LIST", "CAP_IAM_GROUPS_LIST"] }, expect: { capabilities: ["CAP_IAM_GROUPS_LIST", "CAP_IAM_ROLES_LIST"] } },
      { title: "a mask names the description", set: { description: "lists", name: "ignored" }, mask: "description", expect: { description: "lists", name: "lister" } },
    ],
  },
  {
    resource: "RoleBinding",
    service: RoleBindingsService,
    path: "/iam/v2/roleBindings",
    async create(make) {
      const identity = await make(IdentitiesService, "Identity", "/iam/v2/identities", "", { name: "bound", claimMatch: { issuer: "https://issuer.example", subject: "bound" } });
      return make(RoleBindingsService, "RoleBinding", "/iam/v2/roleBindings", "", { identityUid: identity, roleUid: viewer });
    },
    cases: [
      { title: "no mask: the role the body names", set: { roleUid: editor }, expect: { role: { uid: editor } } },
      { title: "a mask names the role", set: { roleUid: editor }, mask: "role_uid", expect: { role: { uid: editor } } },
    ],
  },
  {
    resource: "IdentityProvider",
    service: IdentityProvidersService,
    path: "/iam/v2/identityProviders",
    create: (make) => make(IdentityProvidersService, "IdentityProvider", "/iam/v2/identityProviders", "", { name: "sso", oidc: { issuer: "https://sso.example", clientId: "c", clientSecret: "s" } }),
    cases: [
      { title: "no mask: one leaf of the oidc block", set: { oidc: { groupsClaim: "groups" } }, expect: { oidc: { issuer: "https://sso.example", clientId: "c", groupsClaim: "groups" } } },
      { title: "a leaf path to a repeated field", set: { oidc: { additionalScopes: ["email", "groups"] } }, mask: "oidc.additional_scopes", expect: { oidc: { clientId: "c", additionalScopes: ["email", "groups"] } } },
      { title: "no mask: the default role", set: { defaultRole: viewer }, expect: { defaultRole: viewer, oidc: { clientId: "c" } } },
    ],
  },
  {
    resource: "AccountAssociation",
    service: AccountAssociationsService,
    path: "/iam/v2/accountAssociations",
    create: (make) => make(AccountAssociationsService, "AccountAssociation", "/iam/v2/accountAssociations", "", { name: "cloud", amazon: { account: "123456789012" } }),
    cases: [
      { title: "no mask: another block the body sets", set: { google: { projectId: "my-project-1", projectNumber: "987654321" } }, expect: { amazon: { account: "123456789012" }, google: { projectId: "my-project-1" } } },
      { title: "a leaf path", set: { amazon: { account: "210987654321" } }, mask: "amazon.account", expect: { amazon: { account: "210987654321" } } },
      { title: "a map inside a block", set: { azure: { tenantId: "0f0e0d0c-0b0a-0908-0706-050403020100", clientIds: { ingester: "00000000-0000-0000-0000-000000000001" } } }, mask: "azure", expect: { azure: { clientIds: { ingester: "00000000-0000-0000-0000-000000000001" } }, amazon: { account: "123456789012" } } },
    ],
  },
  {
    resource: "ExternalGroupRoleMapping",
    service: ExternalGroupRoleMappingsService,
    path: "/iam/v2/externalGroupRoleMappings",
    async create(make) {
      const provider = await make(IdentityProvidersService, "IdentityProvider", "/iam/v2/identityProviders", "", { name: "sso", oidc: { issuer: "https://sso.example", clientId: "c", clientSecret: "s" } });
      return make(ExternalGroupRoleMappingsService, "ExternalGroupRoleMapping", "/iam/v2/externalGroupRoleMappings", provider, { externalGroupId: "admins", roleUid: viewer });
    },
    cases: [
      { title: "no mask: the external group", set: { externalGroupId: "ops" }, expect: { externalGroupId: "ops", roleUid: viewer } },
      { title: "a mask names the role", set: { roleUid: editor, externalGroupId: "ignored" }, mask: "role_uid", expect: { roleUid: editor, externalGroupId: "admins" } },
    ],
  },
  {
    resource: "GroupInvite",
    service: GroupInvitesService,
    path: "/iam/v2/groupInvites",
    create: (make) => make(GroupInvitesService, "GroupInvite", "/iam/v2/groupInvites", "", { roleUid: viewer, ttl: "3600s" }),
    cases: [
      { title: "no mask: the email", set: { email: "ada@example.com" }, expect: { email: "ada@example.com", roleUid: viewer } },
      { title: "a mask names the role", set: { roleUid: editor, email: "ignored@example.com" }, mask: "role_uid", expect: { roleUid: editor, email: null } },
    ],
  },
  {
    resource: "Repo",
    service: ReposService,
    path: "/registry/v2/repos",
    create: (make, id) => make(ReposService, "Repo", "/registry/v2/repos", "", { name: `app-${id}` }),
    cases: [
      { title: "no mask: the description", set: { description: "the app" }, expect: { description: "the app" } },
      { title: "no mask: a repeated field", set: { immutableTags: ["v*"] }, expect: { immutableTags: ["v*"] } },
      { title: "a mask names the repeated field", set: { immutableTags: ["release-*"], description: "ignored" }, mask: "immutable_tags", expect: { immutableTags: ["release-*"], description: null } },
    ],
  },
  {
    resource: "RepoReadme",
    service: ReposService,
    path: "/registry/v2/repos",
    getPath: (uid) => `/registry/v2/repos/${uid}/readme`,
    create: (make, id) => make(ReposService, "Repo", "/registry/v2/repos", "", { name: `documented-${id}` }),
    cases: [
      { title: "no mask: the content", set: { content: "# The app\n" }, expect: { content: "# The app\n" } },
      { title: "a mask names the content", set: { content: "# Again\n" }, mask: "content", expect: { content: "# Again\n" } },
    ],
  },
  {
    resource: "RetentionPolicy",
    service: RetentionPoliciesService,
    path: "/registry/v2/retentionPolicies",
    async create(make) {
      const folder = await make(GroupsService, "Group", "/iam/v2/groups", "", { name: "kept" });
      return make(RetentionPoliciesService, "RetentionPolicy", "/registry/v2/retentionPolicies", folder, { keepLast: 10, keepTags: ["latest"] });
    },
    cases: [
      { title: "no mask: a number", set: { keepLast: 5 }, expect: { keepLast: 5, keepTags: ["latest"] } },
      { title: "no mask: a duration", set: { expireAfter: "604800s" }, expect: { expireAfter: "604800s", keepLast: 10 } },
      { title: "a mask names a repeated field", set: { keepTags: ["v*"], keepLast: 1 }, mask: "keep_tags", expect: { keepTags: ["v*"], keepLast: 10 } },
    ],
  },
];

for (const database of await testDatabases()) {
  describe(`Update RPCs and their masks (${database.name})`, { skip: database.skip }, () => {
    const served = serveOverWires({ database, logLevel: "silent" });

    served.describeOverWires((wireName) => `over ${wireName}`, ({ wire, server, wireName }) => {
      const call = (service: DescService, method: string, request: JsonObject, rest: { method: string; path: string; body?: JsonObject }): Promise<Outcome> =>
        wire().call(methodOf(service, method), request, rest, server().ownerToken);
      const ok = (out: Outcome, what: string): JsonObject => {
        assert.equal(out.code, 0, `${what}: ${out.message}`);
        return out.body!;
      };
      /** Creates under `parent`, or under `folder` when it is "". */
      const maker =
        (folder: string): Maker =>
        async (service, resource, path, parent, body) => {
          const under = parent || folder;
          const out = await call(service, `Create${resource}`, { parent: under, [requestField(resource)]: body }, { method: "POST", path: `${path}/${under}`, body });
          return ok(out, `Create${resource}`).uid as string;
        };
      let cases = 0;

      for (const table of TABLES) {
        test(`Update${table.resource}`, async () => {
          for (const c of table.cases) {
            // Each case in a folder of its own: names need only be unique there.
            const id = `${wireName}-${++cases}`;
            const folder = await maker(server().org.uid)(GroupsService, "Group", "/iam/v2/groups", "", { name: `case-${id}` });
            const uid = await table.create(maker(folder), id);
            const field = requestField(table.resource);
            const restPath = table.getPath?.(uid) ?? `${table.path}/${uid}`;
            const request: JsonObject = { [field]: { uid, ...c.set } };
            if (c.mask !== undefined) request.updateMask = c.mask.split(",").map((path) => path.split(".").map(camel).join(".")).join(",");
            const query = c.mask === undefined ? "" : `?updateMask=${encodeURIComponent(c.mask)}`;
            const out = await call(table.service, `Update${table.resource}`, request, { method: "PATCH", path: `${restPath}${query}`, body: c.set });
            if (c.refused !== undefined) {
              assert.equal(out.code, 3, `${c.title}: ${out.message}`);
              assert.deepEqual(violatedFields(out), [c.refused], c.title);
              continue;
            }
            const answered = ok(out, c.title);
            const read = ok(await call(table.service, `Get${table.resource}`, { uid }, { method: "GET", path: restPath }), `Get${table.resource}`);
            assertHolds(answered, c.expect!, `${c.title}: the answer`);
            assertHolds(read, c.expect!, `${c.title}: as read after`);
          }
        });
      }
    });
  });
}
