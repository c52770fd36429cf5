import assert from "node:assert/strict";
import { describe, test } from "node:test";
import type { JsonObject } from "@bufbuild/protobuf";
import { GroupAccountAssociations } from "../../gen/platform/iam/v1/account_associations_pb.js";
import { Groups } from "../../gen/platform/iam/v1/group_pb.js";
import { GroupInvites } from "../../gen/platform/iam/v1/group_invites_pb.js";
import { Terms } from "../../gen/platform/iam/v1/terms_pb.js";
import { TermsService } from "../../gen/platform/iam/v2/terms_service_pb.js";
import { RolesService } from "../../gen/platform/iam/v2/roles_service_pb.js";
import { Identities } from "../../gen/platform/iam/v1/identity_pb.js";
import { RoleBindings } from "../../gen/platform/iam/v1/role_binding_pb.js";
import { Roles } from "../../gen/platform/iam/v1/role_pb.js";
import { PingService } from "../../gen/platform/ping/v1/ping_pb.js";
import { GroupsService } from "../../gen/platform/iam/v2/groups_service_pb.js";
import { newChildUid } from "../../src/aip/uidp.js";
import { builtInRole } from "../../src/access/capabilities.js";
import { describeOverWires } from "../support/over-wires.js";
import { rest } from "../support/v1-differential.js";
import { detailOf, methodOf, reasonOf, type Outcome } from "../support/wires.js";

const ISSUER = "https://issuer.example.com";

/** The rules of v1 (spec 9.3, docs/decisions.md "v1") on every wire. */
const { server } = describeOverWires("IAM v1", {}, ({ server, wire, wireName }) => {
  const call = (service: Parameters<typeof methodOf>[0], name: string, request: JsonObject, r: ReturnType<typeof rest>, token: string = server().ownerToken) =>
    wire().call(methodOf(service, name), request, r, token);
  const ok = async (out: Promise<Outcome>): Promise<JsonObject> => {
    const o = await out;
    assert.equal(o.code, 0, o.message);
    return o.body ?? {};
  };
  const createGroup = (parent: string, name: string, token?: string) =>
    call(Groups, "Create", { parent, group: { name } }, rest("POST", `/iam/v1/groups/${parent}`, { name }), token);
  const listGroups = (query: string, request: JsonObject, token?: string) => call(Groups, "List", request, rest("GET", `/iam/v1/groups?${query}`), token);
  const unique = (name: string) => `${name}-${wireName}-${Math.random().toString(16).slice(2, 8)}`;

  test("List answers the full set as {items}, without paging fields or a total", async () => {
    const parent = String((await ok(createGroup(server().org.uid, unique("many")))).id);
    for (let i = 0; i < 205; i++) await ok(createGroup(parent, `child-${String(i).padStart(3, "0")}`));
    const out = await listGroups(`uidp.children_of=${parent}`, { uidp: { childrenOf: parent } });
    assert.equal(out.code, 0, out.message);
    assert.deepEqual(Object.keys(out.body ?? {}), ["items"]);
    const items = out.body!.items as JsonObject[];
    assert.equal(items.length, 205, "more than one v2 page (200), answered whole");
    assert.deepEqual(
      items.map((g) => g.id),
      [...items.map((g) => String(g.id))].sort(),
      "in uid order",
    );
  });

  test("a missing resource is an empty list (HTTP 200), a malformed id INVALID_ARGUMENT on id", async () => {
    const missing = `${server().org.uid}/0123456789abcdef`;
    const out = await listGroups(`id=${missing}`, { id: missing });
    assert.equal(out.code, 0, out.message);
    if (wireName === "rest") assert.equal(out.httpStatus, 200);
    assert.deepEqual(out.body?.items ?? [], []);
    const gone = await call(Groups, "Delete", { id: missing }, rest("DELETE", `/iam/v1/groups/${missing}`));
    assert.equal(gone.code, 5, "Delete of a missing resource stays NOT_FOUND");
    const bad = await listGroups("id=not-a-uid", { id: "not-a-uid" });
    assert.equal(bad.code, 3);
    assert.deepEqual(((detailOf(bad, "BadRequest")?.fieldViolations as JsonObject[]) ?? []).map((v) => v.field), ["id"]);
  });

  test("Update is a full replacement: fields left out are reset", async () => {
    const group = { name: unique("put"), description: "reset by a PUT without it" };
    const made = await ok(call(Groups, "Create", { parent: server().org.uid, group }, rest("POST", `/iam/v1/groups/${server().org.uid}`, group)));
    const id = String(made.id);
    const renamed = unique("renamed");
    const put = await ok(call(Groups, "Update", { id, name: renamed }, rest("PUT", `/iam/v1/groups/${id}`, { id, name: renamed })));
    assert.equal(put.description, undefined, "description reset to empty");
    const noName = await call(Groups, "Update", { id, description: "x" }, rest("PUT", `/iam/v1/groups/${id}`, { id, description: "x" }));
    assert.equal(noName.code, 3, "name left out is reset, and a group needs one");
  });

  test("a blocked delete fails ambiguously: FAILED_PRECONDITION without a PreconditionFailure (v2 names the cause)", async () => {
    const parent = String((await ok(createGroup(server().org.uid, unique("full")))).id);
    await ok(createGroup(parent, "child"));
    const v1 = await call(Groups, "Delete", { id: parent }, rest("DELETE", `/iam/v1/groups/${parent}`));
    assert.equal(v1.code, 9);
    assert.equal(reasonOf(v1), "FAILED_PRECONDITION");
    assert.equal(detailOf(v1, "PreconditionFailure"), undefined);
    assert.equal(v1.message, `Precondition failed: group ${parent} cannot be deleted`);
    const v2 = await call(GroupsService, "DeleteGroup", { uid: parent }, rest("DELETE", `/iam/v2/groups/${parent}`));
    assert.equal(v2.code, 9);
    assert.equal((detailOf(v2, "PreconditionFailure")?.violations as JsonObject[])[0].type, "RESOURCE_NOT_EMPTY");

    const role = await ok(call(Roles, "Create", { parentId: parent, role: { name: "r", capabilities: ["CAP_REPO_LIST"] } }, rest("POST", `/iam/v1/roles/${parent}`, { name: "r", capabilities: ["CAP_REPO_LIST"] })));
    const identity = await ok(
      call(Identities, "Create", { parentId: parent, identity: { name: "i", claimMatch: { issuer: ISSUER, subject: "i" } } }, rest("POST", `/iam/v1/identities/${parent}`, { name: "i", claim_match: { issuer: ISSUER, subject: "i" } })),
    );
    await ok(call(RoleBindings, "Create", { parent, roleBinding: { identity: identity.id, role: role.id } }, rest("POST", `/iam/v1/rolebindings/${parent}`, { identity: identity.id as string, role: role.id as string })));
    const bound = await call(Roles, "Delete", { id: role.id as string }, rest("DELETE", `/iam/v1/roles/${String(role.id)}`));
    assert.equal(bound.code, 9, "a role still bound");
    assert.equal(detailOf(bound, "PreconditionFailure"), undefined);
  });

  test("INVALID_ARGUMENT names the fields of the v1 request", async () => {
    const group = String((await ok(createGroup(server().org.uid, unique("fields")))).id);
    const made = await ok(
      call(Identities, "Create", { parentId: group, identity: { name: "i", claimMatch: { issuer: ISSUER, subject: "i" } } }, rest("POST", `/iam/v1/identities/${group}`, { name: "i", claimMatch: { issuer: ISSUER, subject: "i" } })),
    );
    const put = await call(Identities, "Update", { id: made.id, description: "no name" }, rest("PUT", `/iam/v1/identities/${String(made.id)}`, { id: made.id as string, description: "no name" }));
    assert.equal(put.code, 3);
    assert.deepEqual(((detailOf(put, "BadRequest")?.fieldViolations as JsonObject[]) ?? []).map((v) => v.field), ["name"]);
    const binding = await call(RoleBindings, "Create", { parent: group, roleBinding: { role: builtInRole("viewer").uid } }, rest("POST", `/iam/v1/rolebindings/${group}`, { role: builtInRole("viewer").uid }));
    assert.equal(binding.code, 3);
    assert.deepEqual(((detailOf(binding, "BadRequest")?.fieldViolations as JsonObject[]) ?? []).map((v) => v.field), ["role_binding.identity"]);
  });

  test("an identity's issuer must be an https URL, on Create and on the PUT", async () => {
    const group = String((await ok(createGroup(server().org.uid, unique("issuer")))).id);
    const fields = (o: Outcome) => ((detailOf(o, "BadRequest")?.fieldViolations as JsonObject[]) ?? []).map((v) => v.field);
    const bad = { name: "i", claimMatch: { issuer: "notaurl", subject: "i" } };
    const created = await call(Identities, "Create", { parentId: group, identity: bad }, rest("POST", `/iam/v1/identities/${group}`, bad));
    assert.equal(created.code, 3);
    assert.deepEqual(fields(created), ["identity.claim_match.issuer"]);
    const keys = { name: "k", static: { issuer: "http://issuer.example", subject: "k", issuerKeys: '{"keys":[{"kty":"EC"}]}' } };
    const staticKeys = await call(Identities, "Create", { parentId: group, identity: keys }, rest("POST", `/iam/v1/identities/${group}`, keys));
    assert.equal(staticKeys.code, 3);
    assert.deepEqual(fields(staticKeys), ["identity.static.issuer"], "the v1 name of the field");
    const made = await ok(call(Identities, "Create", { parentId: group, identity: { ...bad, claimMatch: { issuer: ISSUER, subject: "i" } } }, rest("POST", `/iam/v1/identities/${group}`, { ...bad, claimMatch: { issuer: ISSUER, subject: "i" } })));
    const id = String(made.id);
    const put = await call(Identities, "Update", { id, ...bad }, rest("PUT", `/iam/v1/identities/${id}`, { id, ...bad }));
    assert.equal(put.code, 3);
    assert.deepEqual(fields(put), ["claim_match.issuer"]);
    if (wireName === "rest") assert.equal(put.httpStatus, 400);
  });

  test("deleting a role binding, group invite or account association twice, or one never there, succeeds (AIP-135, as v2)", async () => {
    const group = String((await ok(createGroup(server().org.uid, unique("deletes")))).id);
    const identity = await ok(call(Identities, "Create", { parentId: group, identity: { name: "i" } }, rest("POST", `/iam/v1/identities/${group}`, { name: "i" })));
    const viewer = builtInRole("viewer").uid;
    const binding = await ok(call(RoleBindings, "Create", { parent: group, roleBinding: { identity: identity.id, role: viewer } }, rest("POST", `/iam/v1/rolebindings/${group}`, { identity: identity.id as string, role: viewer })));
    const inviteBody = { group, role: viewer, ttl: "600s" };
    const invite = await ok(call(GroupInvites, "Create", inviteBody, rest("POST", `/iam/v1/group_invites/${group}`, inviteBody)));
    const associationBody = { group, name: "cloud", amazon: { account: "123456789012" } };
    await ok(call(GroupAccountAssociations, "Create", associationBody, rest("POST", `/iam/v1/account_associations/${group}`, associationBody)));
    const deletes = [
      (id: string) => call(RoleBindings, "Delete", { id }, rest("DELETE", `/iam/v1/rolebindings/${id}`)),
      (id: string) => call(GroupInvites, "Delete", { id }, rest("DELETE", `/iam/v1/group_invites/${id}`)),
      (id: string) => call(GroupAccountAssociations, "Delete", { group: id }, rest("DELETE", `/iam/v1/account_associations/${id}`)),
    ];
    const ids = [String(binding.id), String(invite.id), group];
    for (const [i, remove] of deletes.entries()) {
      for (const id of [ids[i], ids[i], newChildUid(group)]) {
        const out = await remove(id);
        assert.equal(out.code, 0, `${id}: ${out.message}`);
        assert.deepEqual(out.body, {});
        if (wireName === "rest") assert.equal(out.httpStatus, 200);
      }
    }
  });

  test("role capabilities are the hosted v1 strings (repo.list); enum names are read too; v2 keeps the enum", async () => {
    const group = String((await ok(createGroup(server().org.uid, unique("caps")))).id);
    const fields = (o: Outcome) => ((detailOf(o, "BadRequest")?.fieldViolations as JsonObject[]) ?? []).map((v) => v.field);
    const role = { name: "reader", capabilities: ["tag.list", "repo.list", "CAP_IAM_GROUPS_LIST"] };
    const made = await ok(call(Roles, "Create", { parentId: group, role }, rest("POST", `/iam/v1/roles/${group}`, role)));
    assert.deepEqual(made.capabilities, ["groups.list", "repo.list", "tag.list"], "string forms, in enum order");
    const id = String(made.id);
    const listed = await ok(call(Roles, "List", { id }, rest("GET", `/iam/v1/roles?id=${id}`)));
    assert.deepEqual((listed.items as JsonObject[])[0].capabilities, ["groups.list", "repo.list", "tag.list"]);
    const v2 = await ok(call(RolesService, "GetRole", { uid: id }, rest("GET", `/iam/v2/roles/${id}`)));
    assert.deepEqual(v2.capabilities, ["CAP_IAM_GROUPS_LIST", "CAP_REPO_LIST", "CAP_TAG_LIST"]);

    const unknown = { name: "bad", capabilities: ["repo.list", "repo.fly"] };
    const refused = await call(Roles, "Create", { parentId: group, role: unknown }, rest("POST", `/iam/v1/roles/${group}`, unknown));
    assert.equal(refused.code, 3);
    assert.equal(reasonOf(refused), "INVALID_ARGUMENT");
    assert.deepEqual(fields(refused), ["role.capabilities[1]"]);
    if (wireName === "rest") assert.equal(refused.httpStatus, 400);
    const put = await call(Roles, "Update", { id, name: "reader", capabilities: ["CAP_UNSPECIFIED"] }, rest("PUT", `/iam/v1/roles/${id}`, { id, name: "reader", capabilities: ["CAP_UNSPECIFIED"] }));
    assert.equal(put.code, 3);
    assert.deepEqual(fields(put), ["capabilities[0]"]);
    const replaced = await ok(call(Roles, "Update", { id, name: "reader", capabilities: ["repo.list"] }, rest("PUT", `/iam/v1/roles/${id}`, { id, name: "reader", capabilities: ["repo.list"] })));
    assert.deepEqual(replaced.capabilities, ["repo.list"]);

    const viewer = await ok(call(Roles, "List", { name: "viewer" }, rest("GET", "/iam/v1/roles?name=viewer")));
    const builtIn = (viewer.items as JsonObject[])[0].capabilities as string[];
    assert.ok(builtIn.includes("groups.list") && builtIn.every((c) => /^[a-z_]+(\.[a-z_]+)+$/.test(c)), builtIn.join(", "));
    const body = { group, role: builtInRole("viewer").uid, ttl: "600s" };
    const invite = await ok(call(GroupInvites, "Create", body, rest("POST", `/iam/v1/group_invites/${group}`, body)));
    assert.deepEqual((invite.role as JsonObject).capabilities, builtIn, "an invite's role shows them the same way");
    const invites = await ok(call(GroupInvites, "List", { group }, rest("GET", `/iam/v1/group_invites?group=${group}`)));
    assert.deepEqual(((invites.items as JsonObject[])[0].role as JsonObject).capabilities, builtIn);
  });

  test("role bindings carry uids of their identity, group and role", async () => {
    const group = String((await ok(createGroup(server().org.uid, unique("rb")))).id);
    const identity = await ok(
      call(Identities, "Create", { parentId: group, identity: { name: "i", claimMatch: { issuer: ISSUER, subject: "i" } } }, rest("POST", `/iam/v1/identities/${group}`, { name: "i", claimMatch: { issuer: ISSUER, subject: "i" } })),
    );
    const viewer = builtInRole("viewer").uid;
    const made = await ok(call(RoleBindings, "Create", { parent: group, roleBinding: { identity: identity.id, role: viewer } }, rest("POST", `/iam/v1/rolebindings/${group}`, { identity: identity.id as string, role: viewer })));
    assert.equal(made.identity, identity.id);
    assert.equal(made.group, group);
    assert.equal(made.role, viewer);
    const listed = await ok(call(RoleBindings, "List", { uidp: { childrenOf: group } }, rest("GET", `/iam/v1/rolebindings?uidp.children_of=${group}`)));
    assert.deepEqual(listed.items, [made]);
  });

  test("Roles.List by parent: the custom roles defined in that group; without it, the built-in ones too", async () => {
    const group = String((await ok(createGroup(server().org.uid, unique("roles")))).id);
    const role = await ok(call(Roles, "Create", { parentId: group, role: { name: "custom", capabilities: ["CAP_REPO_LIST"] } }, rest("POST", `/iam/v1/roles/${group}`, { name: "custom", capabilities: ["CAP_REPO_LIST"] })));
    const byParent = await ok(call(Roles, "List", { parent: group }, rest("GET", `/iam/v1/roles?parent=${group}`)));
    assert.deepEqual((byParent.items as JsonObject[]).map((r) => r.id), [role.id]);
    const viewer = await ok(call(Roles, "List", { name: "viewer" }, rest("GET", "/iam/v1/roles?name=viewer")));
    assert.deepEqual((viewer.items as JsonObject[]).map((r) => r.id), [builtInRole("viewer").uid]);
  });

  test("the same tokens, authorization and hierarchy filters as v2", async () => {
    const mine = String((await ok(createGroup(server().org.uid, unique("mine")))).id);
    const other = String((await ok(createGroup(server().org.uid, unique("other")))).id);
    const identity = await ok(
      call(Identities, "Create", { parentId: mine, identity: { name: "viewer", claimMatch: { issuer: ISSUER, subject: "v" } } }, rest("POST", `/iam/v1/identities/${mine}`, { name: "viewer", claimMatch: { issuer: ISSUER, subject: "v" } })),
    );
    const viewer = builtInRole("viewer").uid;
    await ok(call(RoleBindings, "Create", { parent: mine, roleBinding: { identity: identity.id, role: viewer } }, rest("POST", `/iam/v1/rolebindings/${mine}`, { identity: identity.id as string, role: viewer })));
    const token = (await server().server.tokens.issue({ subject: String(identity.id), audience: "http://api.test" })).token;

    const seen = await ok(listGroups(`uidp.descendants_of=${server().org.uid}`, { uidp: { descendantsOf: server().org.uid } }, token));
    assert.deepEqual((seen.items as JsonObject[]).map((g) => g.id), [mine], "only the group it may list");
    const hidden = await ok(listGroups(`id=${other}`, { id: other }, token));
    assert.deepEqual(hidden.items ?? [], [], "a group it may not list is an empty result");
    const denied = await createGroup(other, "nope", token);
    assert.equal(denied.code, 7, "viewer cannot create");
    const anonymous = await wire().call(methodOf(Groups, "List"), {}, rest("GET", "/iam/v1/groups"));
    assert.equal(anonymous.code, 16);
  });

  test("terms accepted through v1 are the v2 acceptances, and the other way round", async () => {
    const group = String((await ok(createGroup(server().org.uid, unique("terms")))).id);
    const accepted = await ok(call(Terms, "AcceptTerms", { group, documentIds: ["tos"] }, rest("POST", `/iam/v1/terms/${group}`, { documentIds: ["tos"] })));
    assert.deepEqual(accepted, { group, documentIds: ["tos"] });
    await ok(call(TermsService, "AcceptTerms", { group, documentIds: ["aup"] }, rest("POST", `/iam/v2/terms/${group}`, { documentIds: ["aup"] })));
    const v1 = await ok(call(Terms, "ListAccepted", { group }, rest("GET", `/iam/v1/terms/${group}`)));
    const v2 = await ok(call(TermsService, "ListTermsAcceptances", { group }, rest("GET", `/iam/v2/terms/${group}`)));
    const v2Items = (v2.termsAcceptances as JsonObject[]).map((a) => ({ docId: a.docId, acceptedBy: a.acceptedBy, acceptedAt: a.createTime }));
    assert.deepEqual(v1.items, v2Items);
    assert.deepEqual((v1.items as JsonObject[]).map((a) => a.docId).sort(), ["aup", "tos"]);
    assert.equal((v1.items as JsonObject[])[0].acceptedBy, server().ownerUid);
  });

  test("group invites list by group; the code is shown only on create", async () => {
    const group = String((await ok(createGroup(server().org.uid, unique("invites")))).id);
    const body = { group, role: builtInRole("viewer").uid, ttl: "600s" };
    const made = await ok(call(GroupInvites, "Create", body, rest("POST", `/iam/v1/group_invites/${group}`, body)));
    assert.ok(String(made.code).length > 0);
    const listed = await ok(call(GroupInvites, "List", { group }, rest("GET", `/iam/v1/group_invites?group=${group}`)));
    assert.deepEqual((listed.items as JsonObject[]).map((i) => [i.id, i.code]), [[made.id, undefined]]);
    const elsewhere = await ok(call(GroupInvites, "List", { group: server().org.uid, id: made.id }, rest("GET", `/iam/v1/group_invites?group=${server().org.uid}&id=${String(made.id)}`)));
    assert.deepEqual(elsewhere.items ?? [], [], "group and id combine with AND");
  });

  test("ping v1 answers without a credential", async () => {
    const out = await wire().call(methodOf(PingService, "Ping"), {}, rest("GET", "/ping/v1/ping"));
    assert.equal(out.code, 0, out.message);
    assert.equal(out.body?.response, "pong");
  });
});

describe("v1 over REST", () => {
  const get = (path: string, init: RequestInit = {}) =>
    fetch(`${server().apiUrl}${path}`, { ...init, headers: { authorization: `Bearer ${server().ownerToken}`, "content-type": "application/json", ...(init.headers ?? {}) } });

  test("answers in proto field names and takes either spelling; no deprecation or sunset headers", async () => {
    const snake = await get(`/iam/v1/identities/${server().org.uid}`, { method: "POST", body: JSON.stringify({ name: "snake", claim_match: { issuer: ISSUER, subject_pattern: "s.*" } }) });
    assert.equal(snake.status, 200);
    for (const header of ["deprecation", "sunset", "warning"]) assert.equal(snake.headers.get(header), null, header);
    const body = (await snake.json()) as JsonObject;
    assert.ok("created_at" in body && "last_seen" in body && !("createdAt" in body), JSON.stringify(body));
    assert.equal((body.claim_match as JsonObject).subject_pattern, "s.*");
    const camel = await get(`/iam/v1/identities/${server().org.uid}`, { method: "POST", body: JSON.stringify({ name: "camel", claimMatch: { issuer: ISSUER, subjectPattern: "c.*" } }) });
    assert.equal(((await camel.json()) as { claim_match: JsonObject }).claim_match.subject_pattern, "c.*");
    const api = (await (await get("/openapi.json")).json()) as { components: { schemas: Record<string, { properties: JsonObject }> } };
    const documented = Object.keys(api.components.schemas["platform.iam.v1.Identity"].properties);
    for (const key of Object.keys(body)) assert.ok(documented.includes(key), `OpenAPI documents ${key} as answered`);
    const listed = await get(`/iam/v1/identities?id=${String(body.id)}`);
    assert.equal(listed.status, 200);
    for (const header of ["deprecation", "sunset"]) assert.equal(listed.headers.get(header), null, header);
  });

  test("the v2beta1 alias still answers, as v2 and not as v1", async () => {
    const beta = await get(`/iam/v2beta1/groups/${server().org.uid}`);
    assert.equal(beta.status, 200);
    assert.equal(((await beta.json()) as JsonObject).uid, server().org.uid);
    const list = await get(`/iam/v2beta1/groups?uidp.ids=${server().org.uid}`);
    assert.deepEqual(Object.keys((await list.json()) as JsonObject).sort(), ["groups", "nextPageToken", "skipped", "totalCount"]);
    assert.equal((await get("/ping/v2beta1/ping")).status, 200);
    assert.equal((await get(`/iam/v1beta1/groups`)).status, 404, "only v2 has a beta alias");
  });
});
