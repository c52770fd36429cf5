import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { startOidcIssuer, type OidcIssuer } from "../support/oidc-issuer.js";
import { startTestServer, type TestServer } from "../support/test-server.js";
import { detailOf } from "../support/wires.js";
import { createIdentity, exchange, identityUid, unverifiedToken } from "./exchange-helpers.js";

/**
 * Claim-match patterns run on a linear-time engine (RE2): a pattern that backtracks exponentially
 * in JavaScript, such as `(a+)+`, is accepted and harmless; a hostile value (an unverified `iss`
 * from anyone, or a `sub` an upstream issuer lets its users choose) answers at once, and the server
 * keeps serving others meanwhile. On a backtracking engine each case below blocks the whole
 * server for seconds.
 */

/** `(a+)+` against this takes ~2 s in V8 (doubling with each extra "a"). */
const HOSTILE = `${"a".repeat(28)}!`;
const QUICK_MS = 1_000;

let server: TestServer;
let issuer: OidcIssuer;

before(async () => {
  // The subject case verifies a real token of a loopback issuer: the operator's allowance for it.
  server = await startTestServer({ upstreamIssuers: { allowHttp: true, allowPrivateAddresses: true } });
  issuer = await startOidcIssuer();
});
after(async () => {
  await server.close();
  await issuer.close();
});

/** Runs `call` and, 20 ms into it, a Ping over plain HTTP; how long each took. */
async function withConcurrentPing<T extends { ms: number }>(call: () => Promise<T>) {
  const running = call();
  await sleep(20);
  const started = performance.now();
  const ping = await fetch(`${server.apiUrl}/ping/v2/ping`);
  const pingMs = performance.now() - started;
  assert.equal(ping.status, 200);
  return { answer: await running, pingMs };
}

test("a pattern that backtracks exponentially in JavaScript is accepted: it runs on RE2, in linear time", async () => {
  const out = await createIdentity(server, { name: "nested", claimMatch: { issuerPattern: "(a+)+", subjectPattern: "(x+x+)+y" } });
  assert.equal(out.code, 0, out.message);
});

test("patterns RE2 cannot run (backreferences, lookaround) or too large programs are INVALID_ARGUMENT naming the field", async () => {
  for (const [pattern, field] of [
    ["(a)\\1", "identity.claim_match.subject_pattern"],
    ["repo:acme/(?!secret).*", "identity.claim_match.subject_pattern"],
    ["(a?){1000}a{1000}", "identity.claim_match.subject_pattern"],
  ]) {
    const out = await createIdentity(server, { name: "refused", claimMatch: { issuer: "https://issuer.example", subjectPattern: pattern } });
    assert.equal(out.code, 3, `${pattern}: ${out.message}`);
    const violations = detailOf(out, "BadRequest")?.fieldViolations as Array<{ field: string }> | undefined;
    assert.deepEqual(violations?.map((v) => v.field), [field], pattern);
  }
  const claims = await createIdentity(server, { name: "refused", claimMatch: { issuer: "https://issuer.example", subject: "s", claimPatterns: { team: "(?<=x)y" } } });
  assert.equal(claims.code, 3, claims.message);
  assert.match(claims.message ?? "", /claim_patterns\["team"\]/);
});

test("an unauthenticated exchange whose unverified iss is hostile is refused at once, and the server serves others meanwhile", async () => {
  const uid = await identityUid(server, { name: "pattern-issuer", claimMatch: { issuerPattern: "(a+)+", subject: "x" } });
  const { answer, pingMs } = await withConcurrentPing(() => exchange(server, uid, unverifiedToken(HOSTILE, "x")));
  assert.equal(answer.status, 401);
  assert.ok(answer.ms < QUICK_MS, `the exchange took ${Math.round(answer.ms)} ms`);
  assert.ok(pingMs < QUICK_MS, `a concurrent Ping took ${Math.round(pingMs)} ms`);
});

test("a verified token whose subject is hostile is refused at once, and the server serves others meanwhile", async () => {
  const uid = await identityUid(server, { name: "pattern-subject", claimMatch: { issuer: issuer.url, subjectPattern: "(a+)+" } });
  const ok = await exchange(server, uid, await issuer.issue({ sub: "aaaa" }));
  assert.equal(ok.status, 200, "the pattern still matches what it should");
  const token = await issuer.issue({ sub: HOSTILE });
  const { answer, pingMs } = await withConcurrentPing(() => exchange(server, uid, token));
  assert.equal(answer.status, 401);
  assert.ok(answer.ms < QUICK_MS, `the exchange took ${Math.round(answer.ms)} ms`);
  assert.ok(pingMs < QUICK_MS, `a concurrent Ping took ${Math.round(pingMs)} ms`);
});
