import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { exportJWK, generateKeyPair, importJWK, SignJWT, UnsecuredJWT, type JWK } from "jose";
import { ApiError } from "../../src/aip/errors.js";
import { newSigningKey } from "../../src/access/signing-keys.js";
import { createTokenService, UNKNOWN_KID_READ_INTERVAL_MS, type TokenService } from "../../src/access/tokens.js";
import { insertSigningKey } from "../../src/store/server-keys.js";
import { openStore, type Store } from "../../src/server/open-store.js";

const ISSUER = "http://api.test";
let store: Store;
let tokens: TokenService;
let now = Date.parse("2026-11-22T00:00:00Z");

before(async () => {
  store = await openStore(":memory:");
  tokens = await createTokenService(store.db, ISSUER, () => now);
});
after(() => store.close());

const refused = (token: string, audience = ISSUER) =>
  assert.rejects(tokens.verify(token, audience), (e) => e instanceof ApiError && e.kind === "UNAUTHENTICATED");

test("a token verifies for its audience only, and not after it expires", async () => {
  const { token, expiry } = await tokens.issue({ subject: "a".repeat(40), audience: ISSUER, ttlSeconds: 600 });
  assert.equal((await tokens.verify(token, ISSUER)).sub, "a".repeat(40));
  assert.equal(expiry.getTime(), now + 600_000);
  await refused(token, "http://registry.test");
  now += 601_000;
  await refused(token);
});

test("lifetimes are capped at one hour", async () => {
  const { expiry } = await tokens.issue({ subject: "s", audience: ISSUER, ttlSeconds: 86_400 });
  assert.equal(expiry.getTime() - Math.floor(now / 1000) * 1000, 3_600_000);
});

test("the keys survive a restart: a second service on the same store verifies the first one's tokens", async () => {
  const { token } = await tokens.issue({ subject: "s", audience: ISSUER });
  const again = await createTokenService(store.db, ISSUER, () => now);
  assert.equal((await again.verify(token, ISSUER)).sub, "s");
  assert.deepEqual(again.jwks(), tokens.jwks());
});

test("unsigned, foreign-key, HMAC and wrong-issuer tokens are refused", async () => {
  const claims = { sub: "s", aud: ISSUER, iss: ISSUER };
  const iat = Math.floor(now / 1000);
  await refused(new UnsecuredJWT(claims).setIssuedAt(iat).setExpirationTime(iat + 60).encode());

  const foreign = await generateKeyPair("ES256");
  const kid = tokens.jwks().keys[0].kid!;
  await refused(await new SignJWT(claims).setProtectedHeader({ alg: "ES256", kid }).setIssuedAt(iat).setExpirationTime(iat + 60).sign(foreign.privateKey));

  const publicJwk = await exportJWK((await generateKeyPair("ES256")).publicKey);
  const hmacKey = new TextEncoder().encode(JSON.stringify(publicJwk));
  await refused(await new SignJWT(claims).setProtectedHeader({ alg: "HS256", kid }).setIssuedAt(iat).setExpirationTime(iat + 60).sign(hmacKey));

  const other = await createTokenService(store.db, "http://elsewhere.test", () => now);
  await refused((await other.issue({ subject: "s", audience: ISSUER })).token);

  await refused("not a token");
});

test("a token signed with the server's own key is still refused without an expiry", async () => {
  const row = await store.db.selectFrom("signing_keys").selectAll().executeTakeFirstOrThrow();
  const key = await importJWK(JSON.parse(row.private_jwk) as JWK, "ES256");
  const iat = Math.floor(now / 1000);
  const signed = (jwt: SignJWT) => jwt.setProtectedHeader({ alg: "ES256", kid: row.kid }).setIssuer(ISSUER).setAudience(ISSUER).setSubject("s").sign(key);
  assert.equal((await tokens.verify(await signed(new SignJWT({}).setIssuedAt(iat).setExpirationTime(iat + 60)), ISSUER)).sub, "s");
  await refused(await signed(new SignJWT({}).setIssuedAt(iat)));
});

test("tokens naming an unknown key and issued before the key set was read are refused at once, not one read at a time", async () => {
  const foreign = await generateKeyPair("ES256");
  const iat = Math.floor(now / 1000) - 3600;
  const forged = (i: number) =>
    new SignJWT({ sub: "s" }).setProtectedHeader({ alg: "ES256", kid: `unknown-${i}` }).setIssuer(ISSUER).setAudience(ISSUER).setIssuedAt(iat).setExpirationTime(iat + 7200).sign(foreign.privateKey);
  const started = performance.now();
  await Promise.all(Array.from({ length: 40 }, async (_, i) => refused(await forged(i))));
  const elapsed = performance.now() - started;
  assert.ok(elapsed < 150, `40 callers took ${Math.round(elapsed)} ms (reads are at least 200 ms apart)`);
});

test("an unknown kid reads the keys at most once an interval: within it, a key added meanwhile is not looked for; after it, it is found", async () => {
  const store2 = await openStore(":memory:");
  try {
    const service = await createTokenService(store2.db, ISSUER, () => now);
    const foreign = await generateKeyPair("ES256");
    const iat = Math.floor(now / 1000);
    const unknown = await new SignJWT({ sub: "s" }).setProtectedHeader({ alg: "ES256", kid: "made-up" }).setIssuer(ISSUER).setAudience(ISSUER).setIssuedAt(iat).setExpirationTime(iat + 60).sign(foreign.privateKey);
    await assert.rejects(service.verify(unknown, ISSUER), (e) => e instanceof ApiError && e.kind === "UNAUTHENTICATED");
    const added = await newSigningKey(now, now);
    await insertSigningKey(store2.db, added);
    const key = await importJWK(JSON.parse(added.private_jwk) as JWK, "ES256");
    const signed = await new SignJWT({}).setProtectedHeader({ alg: "ES256", kid: added.kid }).setIssuer(ISSUER).setAudience(ISSUER).setSubject("s").setIssuedAt(iat).setExpirationTime(iat + 60).sign(key);
    await assert.rejects(service.verify(signed, ISSUER), (e) => e instanceof ApiError && e.kind === "UNAUTHENTICATED", "within the interval of the last read for an unknown kid");
    await new Promise((resolve) => setTimeout(resolve, UNKNOWN_KID_READ_INTERVAL_MS));
    assert.equal((await service.verify(signed, ISSUER)).sub, "s", "the next read finds it");
  } finally {
    await store2.close();
  }
});
