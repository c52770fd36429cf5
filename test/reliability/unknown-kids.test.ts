import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { describe, test } from "node:test";
import { generateKeyPair, SignJWT } from "jose";
import { GroupsService } from "../../gen/platform/iam/v2/groups_service_pb.js";
import { testDatabases } from "../support/databases.js";
import { serveOverWires } from "../support/over-wires.js";
import { methodOf, type Wire, type WireName } from "../support/wires.js";

/**
 * Forged tokens naming keys the server never had (unknown `kid`s), issued now: after the one
 * read of the key set such a token may start in a while, the others are refused at once, on every
 * wire and on each database, and the server's own tokens are still accepted meanwhile.
 *
 * "At once" is measured against the same number of tokens the server refuses without looking
 * for a key (not JWTs at all), sent the same way just before: on a shared machine the time
 * 120 answers take varies, the difference one read of the key set makes does not.
 */

const FORGED = 120;
/** How much longer than the same number of malformed tokens they may take together, ms: one read of the key set, not one per token. */
const BOUND_MS = 1000;

const foreign = await generateKeyPair("ES256");
const forged = (audience: string) => {
  const now = Math.floor(Date.now() / 1000);
  return new SignJWT({ sub: "s", jti: randomUUID() })
    .setProtectedHeader({ alg: "ES256", kid: `forged-${randomUUID()}` })
    .setIssuer(audience)
    .setAudience(audience)
    .setIssuedAt(now)
    .setExpirationTime(now + 600)
    .sign(foreign.privateKey);
};

for (const database of await testDatabases()) {
  describe(`forged tokens with unknown kids (${database.name})`, { skip: database.skip }, () => {
    const { server, wire } = serveOverWires({ database });
    const getOrg = (on: Wire, token: string) =>
      on.call(methodOf(GroupsService, "GetGroup"), { uid: server().org.uid }, { method: "GET", path: `/iam/v2/groups/${server().org.uid}` }, token);

    for (const name of ["grpc", "connect", "rest"] as const satisfies readonly WireName[]) {
      test(`${FORGED} at once over ${name} are all UNAUTHENTICATED, within ${BOUND_MS} ms of as many malformed ones`, async (t) => {
        /** Sends `tokens` at once; how long until the last answer, ms. */
        const refusedAtOnce = async (tokens: string[]) => {
          const started = performance.now();
          const outcomes = await Promise.all(tokens.map((token) => getOrg(wire(name), token)));
          for (const out of outcomes) assert.equal(out.code, 16, out.message);
          return performance.now() - started;
        };
        const baseline = await refusedAtOnce(Array.from({ length: FORGED }, (_, i) => `not-a-token-${i}`));
        const elapsed = await refusedAtOnce(await Promise.all(Array.from({ length: FORGED }, () => forged("http://api.test"))));
        t.diagnostic(`forged ${Math.round(elapsed)} ms, malformed ${Math.round(baseline)} ms`);
        assert.ok(elapsed < baseline + BOUND_MS, `${FORGED} forged tokens took ${Math.round(elapsed)} ms, as many malformed ones ${Math.round(baseline)} ms`);
        assert.equal((await getOrg(wire(name), server().ownerToken)).code, 0, "the server's own token is accepted");
      });
    }

    test("the registry's /token answers them at once too", async (t) => {
      const refusedAtOnce = async (tokens: string[]) => {
        const started = performance.now();
        const statuses = await Promise.all(
          tokens.map(async (token) => (await fetch(`${server().registryUrl}/token?service=registry.test`, { headers: { authorization: `Bearer ${token}` } })).status),
        );
        assert.deepEqual([...new Set(statuses)], [401]);
        return performance.now() - started;
      };
      const baseline = await refusedAtOnce(Array.from({ length: FORGED }, (_, i) => `not-a-token-${i}`));
      const elapsed = await refusedAtOnce(await Promise.all(Array.from({ length: FORGED }, () => forged("http://registry.test"))));
      t.diagnostic(`forged ${Math.round(elapsed)} ms, malformed ${Math.round(baseline)} ms`);
      assert.ok(elapsed < baseline + BOUND_MS, `${FORGED} forged tokens at /token took ${Math.round(elapsed)} ms, as many malformed ones ${Math.round(baseline)} ms`);
    });
  });
}
