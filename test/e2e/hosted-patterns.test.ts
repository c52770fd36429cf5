import assert from "node:assert/strict";
import { describe, test } from "node:test";
import type { DescService, JsonObject } from "@bufbuild/protobuf";
import { Groups } from "../../gen/platform/iam/v1/group_pb.js";
import { Roles } from "../../gen/platform/iam/v1/role_pb.js";
import { AccountAssociationsService } from "../../gen/platform/iam/v2/account_associations_service_pb.js";
import { GroupsService } from "../../gen/platform/iam/v2/groups_service_pb.js";
import { IdentitiesService } from "../../gen/platform/iam/v2/identities_service_pb.js";
import { IdentityProvidersService } from "../../gen/platform/iam/v2/identity_providers_service_pb.js";
import { RolesService } from "../../gen/platform/iam/v2/roles_service_pb.js";
import { ReposService } from "../../gen/platform/registry/v2/repos_service_pb.js";
import { testDatabases } from "../support/databases.js";
import { serveOverWires } from "../support/over-wires.js";
import { rest } from "../support/v1-differential.js";
import { methodOf, violatedFields, type Outcome, type RestRequest } from "../support/wires.js";

/**
 * Names and descriptions follow the hosted API's validation (hosted-api.md, "Validation regexes"),
 * v1 and v2 alike, with our lengths: a name is `^[a-z0-9 ._-]+$` (spaces allowed: "folder reader",
 * "v1 lister"), a description `^[\S ]*$` (one line, no whitespace but spaces). Over the four wires on
 * SQLite and PostgreSQL.
 */

interface Kind {
  title: string;
  service: DescService;
  method: string;
  /** The request for `fields` under `parent`, and its REST form. */
  request(parent: string, fields: JsonObject): { request: JsonObject; rest: RestRequest };
  /** Fields a valid resource needs besides its name. */
  base: JsonObject;
  /** Where violations are named: `role.` for v2, `` for v1 requests whose resource is the body. */
  prefix: string;
}

const v2 = (service: DescService, resource: string, field: string, path: string, base: JsonObject = {}): Kind => ({
  title: `v2 ${resource}`,
  service,
  method: `Create${resource}`,
  request: (parent, fields) => ({ request: { parent, [field]: fields }, rest: { method: "POST", path: `${path}/${parent}`, body: fields } }),
  base,
  prefix: `${field.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`)}.`,
});

const KINDS: Kind[] = [
  v2(GroupsService, "Group", "group", "/iam/v2/groups"),
  v2(RolesService, "Role", "role", "/iam/v2/roles", { capabilities: ["CAP_IAM_GROUPS_LIST"] }),
  v2(IdentitiesService, "Identity", "identity", "/iam/v2/identities"),
  v2(IdentityProvidersService, "IdentityProvider", "identityProvider", "/iam/v2/identityProviders", { oidc: { issuer: "https://sso.example", clientId: "c", clientSecret: "s" } }),
  v2(AccountAssociationsService, "AccountAssociation", "accountAssociation", "/iam/v2/accountAssociations"),
  {
    title: "v1 Role",
    service: Roles,
    method: "Create",
    request: (parent, fields) => ({ request: { parentId: parent, role: fields }, rest: rest("POST", `/iam/v1/roles/${parent}`, fields) }),
    base: { capabilities: ["CAP_IAM_GROUPS_LIST"] },
    prefix: "role.",
  },
  {
    title: "v1 Group",
    service: Groups,
    method: "Create",
    request: (parent, fields) => ({ request: { parent, group: fields }, rest: rest("POST", `/iam/v1/groups/${parent}`, fields) }),
    base: {},
    prefix: "group.",
  },
];

for (const database of await testDatabases()) {
  describe(`hosted name and description patterns (${database.name})`, { skip: database.skip }, () => {
    const served = serveOverWires({ database, logLevel: "silent" });
    served.describeOverWires((wireName) => `over ${wireName}`, ({ wire, server, wireName }) => {
      const call = (service: DescService, method: string, request: JsonObject, r: RestRequest): Promise<Outcome> =>
        wire().call(methodOf(service, method), request, r, server().ownerToken);
      let folders = 0;
      /** A folder of its own for each resource (names are unique among siblings). */
      async function folder(): Promise<string> {
        const name = `patterns ${wireName} ${++folders}`;
        const out = await call(GroupsService, "CreateGroup", { parent: server().org.uid, group: { name } }, { method: "POST", path: `/iam/v2/groups/${server().org.uid}`, body: { name } });
        assert.equal(out.code, 0, out.message);
        return out.body!.uid as string;
      }

      for (const kind of KINDS) {
        test(`${kind.title}: names with spaces are taken; capitals, other signs and multi-line descriptions are INVALID_ARGUMENT naming the field`, async () => {
          for (const name of ["folder reader", "v1 lister", "a.b_c-d 9"]) {
            const { request, rest: r } = kind.request(await folder(), { ...kind.base, name, description: "reads the folder" });
            const out = await call(kind.service, kind.method, request, r);
            assert.equal(out.code, 0, `${name}: ${out.message}`);
            assert.equal(out.body?.name, name);
          }
          for (const [fields, field] of [
            [{ name: "Folder Reader" }, "name"],
            [{ name: "reader!" }, "name"],
            [{ name: "ok", description: "two\u00a0words" }, "description"],
            [{ name: "ok", description: "tab\there" }, "description"],
          ] as const) {
            const { request, rest: r } = kind.request(await folder(), { ...kind.base, ...fields });
            const out = await call(kind.service, kind.method, request, r);
            assert.equal(out.code, 3, `${JSON.stringify(fields)}: ${out.code} ${out.message}`);
            const named = violatedFields(out).map(String);
            assert.ok(named.some((f) => f.endsWith(field)), `${JSON.stringify(fields)} names ${JSON.stringify(named)}`);
          }
        });
      }

      test("a repo's description follows the same pattern", async () => {
        const body = { name: `described-${wireName}`, description: "two\u2028lines" };
        const out = await call(ReposService, "CreateRepo", { parent: server().org.uid, repo: body }, { method: "POST", path: `/registry/v2/repos/${server().org.uid}`, body });
        assert.equal(out.code, 3, out.message);
        assert.deepEqual(violatedFields(out), ["repo.description"]);
      });
    });
  });
}
