import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { test } from "node:test";
import { GroupsService } from "../../gen/platform/iam/v2/groups_service_pb.js";
import { MAX_TOKEN_TTL_SECONDS } from "../../src/access/tokens.js";
import { signWithServerKey } from "../support/forged-tokens.js";
import { serveOverWires } from "../support/over-wires.js";
import { methodOf, type Wire } from "../support/wires.js";

/** Tokens signed with the server's own key but not as it issues them: too long-lived, or issued in the future. */


const { server, wires } = serveOverWires();

const nowSeconds = () => Math.floor(Date.now() / 1000);
const token = (audience: string, iat: number, exp: number) =>
  signWithServerKey(server().store.db, { iss: "http://api.test", sub: server().ownerUid, aud: audience, iat, exp, jti: randomUUID() });

async function getOrg(wire: Wire, bearer: string) {
  return wire.call(methodOf(GroupsService, "GetGroup"), { uid: server().org.uid }, { method: "GET", path: `/iam/v2/groups/${server().org.uid}` }, bearer);
}

test("a token living longer than the longest the server issues is UNAUTHENTICATED on every wire", async () => {
  const t = nowSeconds();
  const longLived = await token("http://api.test", t, t + MAX_TOKEN_TTL_SECONDS + 1);
  const longest = await token("http://api.test", t, t + MAX_TOKEN_TTL_SECONDS);
  for (const wire of wires()) {
    const refused = await getOrg(wire, longLived);
    assert.equal(refused.code, 16, `${wire.name}: ${refused.message}`);
    if (wire.name === "rest") assert.equal(refused.httpStatus, 401);
    const accepted = await getOrg(wire, longest);
    assert.equal(accepted.code, 0, `${wire.name}: ${accepted.message}`);
  }
});

test("a token issued in the future beyond the clock skew is UNAUTHENTICATED; a few seconds ahead is accepted", async () => {
  const t = nowSeconds();
  const future = await token("http://api.test", t + 300, t + 600);
  const slightlyAhead = await token("http://api.test", t + 5, t + 600);
  for (const wire of wires()) {
    const refused = await getOrg(wire, future);
    assert.equal(refused.code, 16, `${wire.name}: ${refused.message}`);
    assert.match(refused.message ?? "", /iat/);
    assert.equal((await getOrg(wire, slightlyAhead)).code, 0, wire.name);
  }
});

test("the registry's /token refuses a platform token that lives too long", async () => {
  const t = nowSeconds();
  const longLived = await token("http://registry.test", t, t + 24 * 3600);
  const res = await fetch(`${server().registryUrl}/token?service=registry.test`, { headers: { authorization: `Bearer ${longLived}` } });
  assert.equal(res.status, 401);
  const ok = await fetch(`${server().registryUrl}/token?service=registry.test`, {
    headers: { authorization: `Bearer ${await token("http://registry.test", t, t + 600)}` },
  });
  assert.equal(ok.status, 200);
});
