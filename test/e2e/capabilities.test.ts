import assert from "node:assert/strict";
import { test } from "node:test";
import type { JsonObject } from "@bufbuild/protobuf";
import { RolesService } from "../../gen/platform/iam/v2/roles_service_pb.js";
import { ReposService } from "../../gen/platform/registry/v2/repos_service_pb.js";
import { newChildUid } from "../../src/aip/uidp.js";
import { ALL_CAPABILITIES, builtInRole, type BuiltInRoleName } from "../../src/access/capabilities.js";
import { insertIdentity } from "../../src/domains/iam/store/identities.js";
import { bindRole } from "../../src/domains/iam/store/role-bindings.js";
import { serveOverWires } from "../support/over-wires.js";
import { methodOf, type Wire } from "../support/wires.js";

const { server, wire } = serveOverWires();

async function createRole(on: Wire, role: JsonObject) {
  const parent = server().org.uid;
  return on.call(methodOf(RolesService, "CreateRole"), { parent, role }, { method: "POST", path: `/iam/v2/roles/${parent}`, body: role }, server().ownerToken);
}

async function getRole(on: Wire, uid: string) {
  return on.call(methodOf(RolesService, "GetRole"), { uid }, { method: "GET", path: `/iam/v2/roles/${uid}` }, server().ownerToken);
}

for (const name of ["rest", "grpc"] as const) {
  test(`every capability round-trips through CreateRole and GetRole over ${name}`, async () => {
    const made = await createRole(wire(name), { name: `all-${name}`, capabilities: ALL_CAPABILITIES });
    assert.equal(made.code, 0, made.message);
    assert.deepEqual(made.body?.capabilities, ALL_CAPABILITIES, "the current names, in enum order");
    const read = await getRole(wire(name), made.body!.uid as string);
    assert.equal(read.code, 0, read.message);
    assert.deepEqual(read.body?.capabilities, ALL_CAPABILITIES);
  });
}

for (const name of ["rest", "connect"] as const) {
  test(`an older capability name is accepted in JSON over ${name}; answers carry the hosted name`, async () => {
    const made = await createRole(wire(name), {
      name: `old-names-${name}`,
      capabilities: ["CAP_IAM_IDENTITIES_LIST", "CAP_EVENTS_SUBSCRIPTIONS_CREATE", "CAP_IAM_TERMS_LIST", "CAP_IAM_GROUP_INVITES_LIST"],
    });
    assert.equal(made.code, 0, made.message);
    const current = ["CAP_IAM_GROUP_INVITES_LIST", "CAP_IAM_IDENTITY_LIST", "CAP_EVENTS_SUBSCRIPTION_CREATE", "CAP_TERMS_LIST"];
    assert.deepEqual(made.body?.capabilities, current);
    assert.deepEqual((await getRole(wire(name), made.body!.uid as string)).body?.capabilities, current);
  });
}

test("a capability name the enum does not know is INVALID_ARGUMENT over REST", async () => {
  const out = await createRole(wire("rest"), { name: "unknown-cap", capabilities: ["CAP_IAM_IDENTITIES_LIST", "CAP_NOT_A_THING"] });
  assert.equal(out.code, 3);
  assert.equal(out.httpStatus, 400);
});

/** An identity of the organization bound to a built-in role on it, and its registry-audience platform token. */
async function registryCaller(role: BuiltInRoleName): Promise<string> {
  const uid = newChildUid(server().org.uid);
  const now = Date.now();
  await insertIdentity(server().store.db, { uid, group_uid: server().org.uid, name: role, description: "", claim_match: "", static_keys: "", last_seen_time: null, create_time: now, update_time: now });
  await bindRole(server().store.db, server().org.uid, uid, builtInRole(role).uid, now);
  return (await server().server.tokens.issue({ subject: uid, audience: "http://registry.test" })).token;
}

test("the registry pulls for registry.pull, editor and owner, not for viewer (README, api-surface 4)", async () => {
  const repo = { name: "pull-check" };
  const made = await wire("rest").call(methodOf(ReposService, "CreateRepo"), { parent: server().org.uid, repo }, { method: "POST", path: `/registry/v2/repos/${server().org.uid}`, body: repo }, server().ownerToken);
  assert.equal(made.code, 0, made.message);
  for (const role of ["registry.pull", "editor", "owner", "viewer"] as const) {
    const token = await registryCaller(role);
    const res = await fetch(`${server().registryUrl}/token?scope=${encodeURIComponent("repository:acme/pull-check:pull")}`, { headers: { authorization: `Bearer ${token}` } });
    const body = (await res.json()) as { token?: string; errors?: Array<{ code: string }> };
    if (role === "viewer") {
      assert.equal(res.status, 403, role);
      assert.equal(body.errors?.[0]?.code, "DENIED");
    } else {
      assert.equal(res.status, 200, `${role}: ${JSON.stringify(body)}`);
      const claims = JSON.parse(Buffer.from(body.token!.split(".")[1], "base64url").toString()) as { access: Array<{ actions: string[] }> };
      assert.deepEqual(claims.access[0].actions, ["pull"], role);
    }
  }
});
