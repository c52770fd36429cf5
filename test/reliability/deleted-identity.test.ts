import assert from "node:assert/strict";
import { test } from "node:test";
import { GroupsService } from "../../gen/platform/iam/v2/groups_service_pb.js";
import { IdentitiesService } from "../../gen/platform/iam/v2/identities_service_pb.js";
import { PingService } from "../../gen/platform/ping/v2/ping_pb.js";
import { serveOverWires } from "../support/over-wires.js";
import type { TestServer } from "../support/test-server.js";
import { methodOf, restWire } from "../support/wires.js";

/** The token of an identity deleted after it was issued: UNAUTHENTICATED everywhere, never a 500. */

let apiToken: string;
let registryToken: string;

/** An identity with an API and a registry token, verified once, then deleted. */
async function prepare(server: TestServer): Promise<void> {
  const rest = restWire(server.apiPort);
  const made = await rest.call(
    methodOf(IdentitiesService, "CreateIdentity"),
    {},
    { method: "POST", path: `/iam/v2/identities/${server.org.uid}`, body: { name: "doomed" } },
    server.ownerToken,
  );
  assert.equal(made.code, 0, made.message);
  const uid = made.body!.uid as string;
  apiToken = (await server.server.tokens.issue({ subject: uid, audience: "http://api.test" })).token;
  registryToken = (await server.server.tokens.issue({ subject: uid, audience: "http://registry.test" })).token;
  // Verified once while it existed (the verification cache must not keep it alive).
  const warm = await rest.call(methodOf(PingService, "Ping"), {}, { method: "GET", path: "/ping/v2/ping" }, apiToken);
  assert.equal(warm.code, 0, warm.message);
  const deleted = await rest.call(methodOf(IdentitiesService, "DeleteIdentity"), { uid }, { method: "DELETE", path: `/iam/v2/identities/${uid}` }, server.ownerToken);
  assert.equal(deleted.code, 0, deleted.message);
}

// Organization creation open to anyone: the call that used to fail on a foreign key.
const { server, wires } = serveOverWires({ organizationCreation: "anyone", prepare });

test("creating an organization with a deleted identity's token is UNAUTHENTICATED, not a 500", async () => {
  for (const wire of wires()) {
    const out = await wire.call(methodOf(GroupsService, "CreateGroup"), { parent: "", group: { name: `ghost-${wire.name}` } }, { method: "POST", path: "/iam/v2/groups", body: { name: `ghost-${wire.name}` } }, apiToken);
    assert.equal(out.code, 16, `${wire.name}: ${out.message}`);
    if (wire.name === "rest") assert.equal(out.httpStatus, 401);
    assert.match(out.message ?? "", /no longer exists/);
  }
  assert.equal(server().logs.filter((l) => l.includes('"level":"error"')).length, 0, "no internal error was logged");
});

test("every RPC refuses it, public and authenticated-only ones included", async () => {
  for (const wire of wires()) {
    const ping = await wire.call(methodOf(PingService, "Ping"), {}, { method: "GET", path: "/ping/v2/ping" }, apiToken);
    assert.equal(ping.code, 16, `${wire.name} Ping: ${ping.message}`);
    const list = await wire.call(methodOf(GroupsService, "ListGroups"), {}, { method: "GET", path: "/iam/v2/groups" }, apiToken);
    assert.equal(list.code, 16, `${wire.name} ListGroups: ${list.message}`);
  }
});

test("the registry refuses it with 401: at /token and as a platform token on a repository", async () => {
  const res = await fetch(`${server().registryUrl}/token?service=registry.test`, { headers: { authorization: `Bearer ${registryToken}` } });
  assert.equal(res.status, 401);
  assert.match(await res.text(), /no longer exists/);
  const direct = await fetch(`${server().registryUrl}/v2/acme/app/tags/list`, { headers: { authorization: `Bearer ${registryToken}` } });
  assert.equal(direct.status, 401);
  assert.match(direct.headers.get("www-authenticate") ?? "", /error="invalid_token"/);
  assert.match(await direct.text(), /no longer exists/);
});
