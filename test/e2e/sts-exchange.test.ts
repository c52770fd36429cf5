import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { decodeJwt, exportJWK, generateKeyPair, SignJWT } from "jose";
import { builtInRole } from "../../src/access/capabilities.js";
import { ExchangeRefused, verifyForIdentity } from "../../src/transport/auth/exchange.js";
import { createUpstreamKeys, UpstreamFetchError } from "../../src/transport/auth/upstream-keys.js";
import { newChildUid } from "../../src/aip/uidp.js";
import { getIdentity, insertIdentity } from "../../src/domains/iam/store/identities.js";
import { bindRole } from "../../src/domains/iam/store/role-bindings.js";
import { startOidcIssuer, type OidcIssuer } from "../support/oidc-issuer.js";
import { startTestServer, type TestServer } from "../support/test-server.js";

let server: TestServer;
let issuer: OidcIssuer;

before(async () => {
  // The test issuer is plain http on loopback: the operator's allowance for it.
  server = await startTestServer({ upstreamIssuers: { allowHttp: true, allowPrivateAddresses: true } });
  issuer = await startOidcIssuer();
});
after(async () => {
  await server.close();
  await issuer.close();
});

interface StatusBody {
  code?: number;
  message?: string;
  details?: Array<{ "@type": string; reason?: string; domain?: string; fieldViolations?: Array<{ field: string }> }>;
}
interface Answer {
  status: number;
  body: { token?: string; expiry?: string } & StatusBody;
}

let counter = 0;
/** Inserts an identity under the organization, with a viewer binding there unless `bound` is false. */
async function workload(fields: { claimMatch?: object; staticKeys?: object; bound?: boolean }): Promise<string> {
  const uid = newChildUid(server.org.uid);
  const now = Date.now();
  await insertIdentity(server.store.db, {
    uid,
    group_uid: server.org.uid,
    name: `workload-${++counter}`,
    description: "",
    claim_match: fields.claimMatch ? JSON.stringify(fields.claimMatch) : "",
    static_keys: fields.staticKeys ? JSON.stringify(fields.staticKeys) : "",
    last_seen_time: null,
    create_time: now,
    update_time: now,
  });
  if (fields.bound !== false) await bindRole(server.store.db, server.org.uid, uid, builtInRole("viewer").uid, now);
  return uid;
}

async function exchange(params: Record<string, string>, bearer: string | undefined, how: "query" | "form" = "query"): Promise<Answer> {
  const search = new URLSearchParams(params).toString();
  const headers: Record<string, string> = bearer === undefined ? {} : { authorization: `Bearer ${bearer}` };
  const res =
    how === "query"
      ? await fetch(`${server.apiUrl}/sts/exchange?${search}`, { method: "POST", headers })
      : await fetch(`${server.apiUrl}/sts/exchange`, { method: "POST", headers: { ...headers, "content-type": "application/x-www-form-urlencoded" }, body: search });
  return { status: res.status, body: (await res.json()) as Answer["body"] };
}

function assertNoMatch(answer: Answer) {
  assert.equal(answer.status, 401, JSON.stringify(answer.body));
  assert.equal(answer.body.code, 16);
  assert.equal(answer.body.message, "Unauthenticated: the token does not match the identity");
  assert.equal(answer.body.details?.[0].reason, "UNAUTHENTICATED");
  assert.equal(answer.body.details?.[0].domain, "api.test");
}

function assertInvalid(answer: Answer, field: string) {
  assert.equal(answer.status, 400, JSON.stringify(answer.body));
  assert.equal(answer.body.code, 3);
  assert.equal(answer.body.details?.[0].reason, "INVALID_ARGUMENT");
  const badRequest = answer.body.details?.find((d) => d["@type"] === "type.googleapis.com/google.rpc.BadRequest");
  assert.deepEqual(badRequest?.fieldViolations?.map((v) => v.field), [field]);
}

const getOrg = (token: string) => fetch(`${server.apiUrl}/iam/v2/groups/${server.org.uid}`, { headers: { authorization: `Bearer ${token}` } });
const SUBJECT = "repo:acme/app:ref:refs/heads/main";

describe("matching", () => {
  test("a matching token is exchanged for a platform token that acts as the identity through its bindings", async () => {
    const uid = await workload({ claimMatch: { issuer: issuer.url, subject: SUBJECT } });
    const answer = await exchange({ identity: uid }, await issuer.issue({ sub: SUBJECT }));
    assert.equal(answer.status, 200, JSON.stringify(answer.body));
    const claims = decodeJwt(answer.body.token!);
    assert.equal(claims.sub, uid);
    assert.equal(claims.aud, "http://api.test");
    assert.equal(claims.iss, "http://api.test");
    assert.equal(answer.body.expiry, new Date(claims.exp! * 1000).toISOString());
    assert.match(answer.body.expiry!, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/, "ISO 8601 UTC with milliseconds (spec 2)");
    assert.equal((await getOrg(answer.body.token!)).status, 200);
    const row = await getIdentity(server.store.db, uid);
    assert.ok(row.last_seen_time !== null && Date.now() - row.last_seen_time < 60_000);
  });

  test("the same exchange by form body; without a binding the token is denied", async () => {
    const uid = await workload({ claimMatch: { issuer: issuer.url, subject: SUBJECT }, bound: false });
    const answer = await exchange({ identity: uid, aud: "http://api.test" }, await issuer.issue({ sub: SUBJECT }), "form");
    assert.equal(answer.status, 200, JSON.stringify(answer.body));
    assert.equal((await getOrg(answer.body.token!)).status, 403);
  });

  test("wrong subject, wrong issuer, expired token, bad signature, unknown identity: one 401, precise log", async () => {
    const uid = await workload({ claimMatch: { issuer: issuer.url, subject: SUBJECT } });
    server.logs.length = 0;
    assertNoMatch(await exchange({ identity: uid }, await issuer.issue({ sub: "repo:acme/app:ref:refs/heads/dev" })));
    assertNoMatch(await exchange({ identity: uid }, await issuer.issue({ sub: SUBJECT, iss: "https://evil.example" })));
    assertNoMatch(await exchange({ identity: uid }, await issuer.issue({ sub: SUBJECT }, { expiresIn: -120 })));
    const good = await issuer.issue({ sub: SUBJECT });
    const [h, p, s] = good.split(".");
    const tampered = `${h}.${p}.${s.startsWith("A") ? "B" : "A"}${s.slice(1)}`;
    assertNoMatch(await exchange({ identity: uid }, tampered));
    assertNoMatch(await exchange({ identity: newChildUid(server.org.uid) }, good));
    assertNoMatch(await exchange({ identity: uid }, "not-a-jwt"));
    const reasons = server.logs.map((l) => JSON.parse(l) as { msg: string; reason?: string }).filter((l) => l.msg === "sts exchange refused").map((l) => l.reason);
    assert.equal(reasons.length, 6, JSON.stringify(reasons));
    assert.match(reasons[0]!, /subject/);
    assert.match(reasons[1]!, /issuer/);
    assert.match(reasons[2]!, /ERR_JWT_EXPIRED/);
    assert.match(reasons[3]!, /ERR_JWS_SIGNATURE_VERIFICATION_FAILED/);
    assert.match(reasons[4]!, /no such identity/);
    assert.match(reasons[5]!, /not a JWT/);
  });

  test("an expired token within the 30 s clock tolerance is accepted", async () => {
    const uid = await workload({ claimMatch: { issuer: issuer.url, subject: SUBJECT } });
    assert.equal((await exchange({ identity: uid }, await issuer.issue({ sub: SUBJECT }, { expiresIn: -5 }))).status, 200);
  });

  test("an identity without claim_match or static keys (the bootstrap owner) cannot be exchanged", async () => {
    assertNoMatch(await exchange({ identity: server.ownerUid }, await issuer.issue({ sub: SUBJECT })));
  });

  test("an identity with only an issuer is not exchangeable", async () => {
    const uid = await workload({ claimMatch: { issuer: issuer.url } });
    assertNoMatch(await exchange({ identity: uid }, await issuer.issue({ sub: SUBJECT })));
  });

  test("patterns match whole values only", async () => {
    const escaped = issuer.url.replace(/[.]/g, "\\.");
    const uid = await workload({ claimMatch: { issuerPattern: `${escaped}`, subjectPattern: "repo:acme/.*:ref:refs/heads/main" } });
    assert.equal((await exchange({ identity: uid }, await issuer.issue({ sub: "repo:acme/other:ref:refs/heads/main" }))).status, 200);
    assertNoMatch(await exchange({ identity: uid }, await issuer.issue({ sub: "repo:acme/other:ref:refs/heads/main-evil" })));
    assertNoMatch(await exchange({ identity: uid }, await issuer.issue({ sub: "repo:evil/x:ref:refs/heads/main" })));
  });

  test("extra claims and claim patterns must all match", async () => {
    const uid = await workload({
      claimMatch: { issuer: issuer.url, subject: SUBJECT, claims: { repository_owner: "acme", run_attempt: "1" }, claimPatterns: { workflow_ref: "acme/app/\\.github/workflows/.*@refs/heads/main" } },
    });
    const claims = { sub: SUBJECT, repository_owner: "acme", run_attempt: 1, workflow_ref: "acme/app/.github/workflows/release.yml@refs/heads/main" };
    assert.equal((await exchange({ identity: uid }, await issuer.issue(claims))).status, 200);
    assertNoMatch(await exchange({ identity: uid }, await issuer.issue({ ...claims, repository_owner: "evil" })));
    assertNoMatch(await exchange({ identity: uid }, await issuer.issue({ ...claims, workflow_ref: "acme/app/.github/workflows/release.yml@refs/heads/main2" })));
    const { repository_owner: _, ...withoutOwner } = claims;
    assertNoMatch(await exchange({ identity: uid }, await issuer.issue(withoutOwner)));
  });

  test("audience: the token's aud (string or array) must contain it", async () => {
    const uid = await workload({ claimMatch: { issuer: issuer.url, subject: SUBJECT, audience: "platform" } });
    assert.equal((await exchange({ identity: uid }, await issuer.issue({ sub: SUBJECT, aud: "platform" }))).status, 200);
    assert.equal((await exchange({ identity: uid }, await issuer.issue({ sub: SUBJECT, aud: ["sts", "platform"] }))).status, 200);
    assertNoMatch(await exchange({ identity: uid }, await issuer.issue({ sub: SUBJECT, aud: "platform-other" })));
    assertNoMatch(await exchange({ identity: uid }, await issuer.issue({ sub: SUBJECT })));
  });
});

describe("static keys", () => {
  const STATIC_ISS = "https://static.example";
  test("a token signed by the identity's own keys, no network; iss and sub must be equal; refused after expirationTime", async () => {
    const { privateKey, publicKey } = await generateKeyPair("ES256", { extractable: true });
    const jwk = { ...(await exportJWK(publicKey)), kid: "k1", alg: "ES256" };
    const sign = (claims: Record<string, unknown>, exp = Math.floor(Date.now() / 1000) + 300) =>
      new SignJWT(claims).setProtectedHeader({ alg: "ES256", kid: "k1" }).setIssuedAt().setExpirationTime(exp).sign(privateKey);
    const staticKeys = { issuer: STATIC_ISS, subject: "deployer", issuerKeys: { keys: [jwk] } };
    const uid = await workload({ staticKeys });
    const before = { ...issuer.requests };
    const answer = await exchange({ identity: uid }, await sign({ iss: STATIC_ISS, sub: "deployer" }));
    assert.equal(answer.status, 200, JSON.stringify(answer.body));
    assert.equal(decodeJwt(answer.body.token!).sub, uid);
    assertNoMatch(await exchange({ identity: uid }, await sign({ iss: STATIC_ISS, sub: "other" })));
    assertNoMatch(await exchange({ identity: uid }, await sign({ iss: "https://other.example", sub: "deployer" })));
    assertNoMatch(await exchange({ identity: uid }, await sign({ iss: STATIC_ISS, sub: "deployer" }, Math.floor(Date.now() / 1000) - 120)));
    // A token of the loopback issuer with the same iss/sub is not signed by the static keys.
    assertNoMatch(await exchange({ identity: uid }, await issuer.issue({ iss: STATIC_ISS, sub: "deployer" })));
    assert.deepEqual(issuer.requests, before);

    const expired = await workload({ staticKeys: { ...staticKeys, expirationTime: Date.now() - 1000 } });
    assertNoMatch(await exchange({ identity: expired }, await sign({ iss: STATIC_ISS, sub: "deployer" })));
  });
});

describe("audience and parameters", () => {
  test("aud = the registry URL gives a registry token; another URL is INVALID_ARGUMENT", async () => {
    const uid = await workload({ claimMatch: { issuer: issuer.url, subject: SUBJECT } });
    const answer = await exchange({ identity: uid, aud: "http://registry.test" }, await issuer.issue({ sub: SUBJECT }));
    assert.equal(answer.status, 200, JSON.stringify(answer.body));
    const claims = await server.server.tokens.verify(answer.body.token!, "http://registry.test");
    assert.equal(claims.aud, "http://registry.test");
    assert.equal(claims.sub, uid);
    assert.equal((await getOrg(answer.body.token!)).status, 401);
    assertInvalid(await exchange({ identity: uid, aud: "https://elsewhere.example" }, await issuer.issue({ sub: SUBJECT })), "aud");
  });

  test("a missing or malformed bearer is 401 UNAUTHENTICATED", async () => {
    const uid = await workload({ claimMatch: { issuer: issuer.url, subject: SUBJECT } });
    const missing = await exchange({ identity: uid }, undefined);
    assert.equal(missing.status, 401);
    assert.equal(missing.body.details?.[0].reason, "UNAUTHENTICATED");
    const basic = await fetch(`${server.apiUrl}/sts/exchange?identity=${encodeURIComponent(uid)}`, { method: "POST", headers: { authorization: "Basic eDp5" } });
    assert.equal(basic.status, 401);
    assert.equal(basic.headers.get("www-authenticate"), 'Bearer error="invalid_token"');
  });

  test("a bad identity, unknown or repeated parameters, a non-form body are INVALID_ARGUMENT", async () => {
    const token = await issuer.issue({ sub: SUBJECT });
    assertInvalid(await exchange({}, token), "identity");
    assertInvalid(await exchange({ identity: "nope" }, token), "identity");
    assertInvalid(await exchange({ identity: server.org.uid }, token), "identity");
    assertInvalid(await exchange({ identity: server.ownerUid, audience: "x" }, token), "audience");
    const uid = await workload({ claimMatch: { issuer: issuer.url, subject: SUBJECT } });
    const twice = await fetch(`${server.apiUrl}/sts/exchange?identity=${uid}`, {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/x-www-form-urlencoded" },
      body: `identity=${uid}`,
    });
    assertInvalid({ status: twice.status, body: (await twice.json()) as Answer["body"] }, "identity");
    const json = await fetch(`${server.apiUrl}/sts/exchange?identity=${uid}`, {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: "{}",
    });
    assertInvalid({ status: json.status, body: (await json.json()) as Answer["body"] }, "body");
  });

  test("methods other than GET and POST are 405; an oversized body is 413", async () => {
    const put = await fetch(`${server.apiUrl}/sts/exchange`, { method: "PUT" });
    assert.equal(put.status, 405);
    assert.equal(put.headers.get("allow"), "GET, POST");
    const big = await fetch(`${server.apiUrl}/sts/exchange`, {
      method: "POST",
      headers: { authorization: "Bearer x", "content-type": "application/x-www-form-urlencoded" },
      body: `identity=${"a".repeat(5 * 1024 * 1024)}`,
    });
    assert.equal(big.status, 413);
  });
});

describe("upstream keys", () => {
  test("two exchanges fetch the issuer's discovery document and JWKS once", async () => {
    const fresh = await startOidcIssuer();
    try {
      const uid = await workload({ claimMatch: { issuer: fresh.url, subject: SUBJECT } });
      assert.equal((await exchange({ identity: uid }, await fresh.issue({ sub: SUBJECT }))).status, 200);
      assert.equal((await exchange({ identity: uid }, await fresh.issue({ sub: SUBJECT }))).status, 200);
      assert.deepEqual(fresh.requests, { discovery: 1, jwks: 1 });
    } finally {
      await fresh.close();
    }
  });

  test("nothing is fetched for an issuer the identity does not name", async () => {
    const other = await startOidcIssuer();
    try {
      const uid = await workload({ claimMatch: { issuer: issuer.url, subject: SUBJECT } });
      assertNoMatch(await exchange({ identity: uid }, await other.issue({ sub: SUBJECT })));
      assert.deepEqual(other.requests, { discovery: 0, jwks: 0 });
    } finally {
      await other.close();
    }
  });

  test("cache expiry, unknown-kid refetch at most once a minute, unreachable issuers", async () => {
    const fresh = await startOidcIssuer();
    let clock = Date.now();
    const keys = createUpstreamKeys({ now: () => clock, allowHttp: true, allowPrivateAddresses: true });
    const identity = { uid: "x", claim_match: JSON.stringify({ issuer: fresh.url, subject: SUBJECT }), static_keys: "" };
    try {
      await verifyForIdentity(await fresh.issue({ sub: SUBJECT }, { expiresIn: 3600 }), identity, keys, clock);
      assert.deepEqual(fresh.requests, { discovery: 1, jwks: 1 });
      await fresh.rotate();
      // A new kid right after a fetch: no refetch yet.
      await assert.rejects(verifyForIdentity(await fresh.issue({ sub: SUBJECT }, { expiresIn: 3600 }), identity, keys, clock), ExchangeRefused);
      assert.deepEqual(fresh.requests, { discovery: 1, jwks: 1 });
      clock += 61_000;
      await verifyForIdentity(await fresh.issue({ sub: SUBJECT }, { expiresIn: 3600 }), identity, keys, clock);
      assert.deepEqual(fresh.requests, { discovery: 1, jwks: 2 });
      clock += 10 * 60_000;
      await verifyForIdentity(await fresh.issue({ sub: SUBJECT }, { expiresIn: 3600 }), identity, keys, clock);
      assert.deepEqual(fresh.requests, { discovery: 2, jwks: 3 });
    } finally {
      await fresh.close();
    }
    clock += 10 * 60_000;
    await assert.rejects(verifyForIdentity(await fresh.issue({ sub: SUBJECT }, { expiresIn: 3600 }), identity, keys, clock), UpstreamFetchError);
  });

  test("an oversized discovery document is refused", async () => {
    const keys = createUpstreamKeys({ maxBytes: 10, allowHttp: true, allowPrivateAddresses: true });
    const identity = { uid: "x", claim_match: JSON.stringify({ issuer: issuer.url, subject: SUBJECT }), static_keys: "" };
    await assert.rejects(verifyForIdentity(await issuer.issue({ sub: SUBJECT }), identity, keys, Date.now()), /larger than 10 bytes/);
  });
});
