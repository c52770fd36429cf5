import assert from "node:assert/strict";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, describe, test } from "node:test";
import * as client from "openid-client";
import { chromiumSkip, launchChromium } from "../support/browser.js";
import { startRogueIdp, type RogueIdp, type RogueMode } from "../support/rogue-idp.js";
import { startTestIdp, type TestIdp } from "../support/test-idp.js";

/**
 * The identity providers the login tests run, proved against openid-client itself (the
 * library the server's login broker uses): the test IdP (oidc-provider) completes an
 * authorization code + PKCE + nonce login over plain HTTP and in headless Chromium, with the
 * email and groups claims in the ID token; the rogue IdP's bad modes each make
 * openid-client refuse the token response, and it refuses replayed codes and wrong verifiers.
 */

const REDIRECT_URI = "http://127.0.0.1:9/callback";
const insecure = { execute: [client.allowInsecureRequests] };

interface Login {
  url: URL;
  verifier: string;
  state: string;
  nonce: string;
}

async function startLogin(config: client.Configuration, scope = "openid email profile groups", redirectUri = REDIRECT_URI): Promise<Login> {
  const verifier = client.randomPKCECodeVerifier();
  const state = client.randomState();
  const nonce = client.randomNonce();
  const url = client.buildAuthorizationUrl(config, {
    redirect_uri: redirectUri,
    scope,
    code_challenge: await client.calculatePKCECodeChallenge(verifier),
    code_challenge_method: "S256",
    state,
    nonce,
  });
  return { url, verifier, state, nonce };
}

function finish(config: client.Configuration, login: Login, callback: URL, verifier = login.verifier) {
  return client.authorizationCodeGrant(config, callback, { pkceCodeVerifier: verifier, expectedState: login.state, expectedNonce: login.nonce, idTokenExpected: true });
}

describe("test IdP (oidc-provider)", () => {
  let idp: TestIdp;
  before(async () => {
    idp = await startTestIdp({ idTokenTtlSeconds: 120 });
    await idp.addClient({ client_id: "public-app", redirect_uris: [REDIRECT_URI] });
    idp.setAccount("alice", { email: "alice@example.com", email_verified: true, name: "Alice Example", groups: ["engineering", "admins"] });
  });
  after(() => idp.close());

  test("a public client logs in with code + PKCE + nonce over HTTP; the claims are in the ID token", { timeout: 10_000 }, async () => {
    const config = await client.discovery(new URL(idp.issuer), "public-app", undefined, undefined, insecure);
    assert.equal(config.serverMetadata().issuer, idp.issuer);
    assert.deepEqual(config.serverMetadata().code_challenge_methods_supported, ["S256"]);
    const login = await startLogin(config);
    const callback = await idp.loginOverHttp(login.url, "alice");
    assert.equal(`${callback.origin}${callback.pathname}`, REDIRECT_URI);
    assert.equal(callback.searchParams.get("state"), login.state);
    assert.ok(callback.searchParams.get("code"));

    const tokens = await finish(config, login, callback);
    const claims = tokens.claims()!;
    assert.equal(claims.iss, idp.issuer);
    assert.equal(claims.aud, "public-app");
    assert.equal(claims.sub, "alice");
    assert.equal(claims.nonce, login.nonce);
    assert.equal(claims.email, "alice@example.com");
    assert.equal(claims.email_verified, true);
    assert.equal(claims.name, "Alice Example");
    assert.deepEqual(claims.groups, ["engineering", "admins"]);
    assert.equal(claims.exp - claims.iat, 120, "idTokenTtlSeconds");
    assert.deepEqual(idp.serverErrors, []);
  });

  test("a confidential client added after start logs in (client_secret_basic); only the requested scopes' claims are given", { timeout: 10_000 }, async () => {
    await idp.addClient({ client_id: "web-app", client_secret: "web-app-secret", redirect_uris: [REDIRECT_URI] });
    idp.setAccount("bob", { sub: "user-bob", email: "bob@example.com", groups: ["ops"] });
    const config = await client.discovery(new URL(idp.issuer), "web-app", undefined, client.ClientSecretBasic("web-app-secret"), insecure);
    const login = await startLogin(config, "openid email");
    const tokens = await finish(config, login, await idp.loginOverHttp(login.url, "bob"));
    const claims = tokens.claims()!;
    assert.equal(claims.sub, "user-bob");
    assert.equal(claims.email, "bob@example.com");
    assert.equal(claims.groups, undefined, "no groups scope, no groups claim");
    assert.equal(claims.name, undefined);

    const wrong = await client.discovery(new URL(idp.issuer), "web-app", undefined, client.ClientSecretBasic("not-the-secret"), insecure);
    const again = await startLogin(wrong, "openid");
    const callback = await idp.loginOverHttp(again.url, "bob");
    await assert.rejects(finish(wrong, again, callback), (error: Error & { status?: number }) => error.status === 401);
  });

  test("an unknown user is refused at the form; a public client without PKCE is refused", { timeout: 10_000 }, async () => {
    const config = await client.discovery(new URL(idp.issuer), "public-app", undefined, undefined, insecure);
    const login = await startLogin(config);
    await assert.rejects(idp.loginOverHttp(login.url, "mallory"), /login as mallory refused.*Unknown user/);

    const noPkce = client.buildAuthorizationUrl(config, { redirect_uri: REDIRECT_URI, scope: "openid", state: "s1", nonce: "n1" });
    const callback = await idp.loginOverHttp(noPkce, "alice");
    assert.equal(callback.searchParams.get("error"), "invalid_request");
    assert.match(callback.searchParams.get("error_description") ?? "", /PKCE/);
  });

  test("a public client logs in through the IdP's form in headless Chromium", { skip: chromiumSkip, timeout: 30_000 }, async () => {
    const seen: URL[] = [];
    const rp = http.createServer((req, res) => {
      const url = new URL(req.url ?? "/", "http://127.0.0.1");
      if (url.pathname !== "/callback") return void res.writeHead(404).end();
      seen.push(url);
      res.writeHead(200, { "content-type": "text/html" }).end("<!DOCTYPE html><title>Signed in</title><p>signed in</p>");
    });
    await new Promise<void>((resolve) => rp.listen(0, "127.0.0.1", resolve));
    const redirectUri = `http://127.0.0.1:${(rp.address() as AddressInfo).port}/callback`;
    const browser = await launchChromium();
    try {
      await idp.addClient({ client_id: "browser-app", redirect_uris: [redirectUri] });
      const config = await client.discovery(new URL(idp.issuer), "browser-app", undefined, undefined, insecure);
      const login = await startLogin(config, "openid email groups", redirectUri);
      const page = await browser.newPage();
      await page.goto(login.url.href);
      await page.fill("input[name=login]", "alice");
      await page.fill("input[name=password]", "any password");
      await Promise.all([page.waitForURL((url) => url.href.startsWith(redirectUri)), page.click("button[type=submit]")]);
      assert.equal(await page.title(), "Signed in");
      assert.equal(seen.length, 1);
      const callback = new URL(`${redirectUri}${seen[0].search}`);
      assert.equal(callback.searchParams.get("state"), login.state);
      const claims = (await finish(config, login, callback)).claims()!;
      assert.equal(claims.email, "alice@example.com");
      assert.deepEqual(claims.groups, ["engineering", "admins"]);
    } finally {
      await browser.close();
      rp.closeAllConnections();
      await new Promise<void>((resolve) => rp.close(() => resolve()));
    }
  });
});

describe("rogue IdP", () => {
  let rogue: RogueIdp;
  let config: client.Configuration;
  before(async () => {
    rogue = await startRogueIdp();
    rogue.setClaims({ sub: "rogue-1", email: "r@example.com", email_verified: true, groups: ["g"] });
    config = await client.discovery(new URL(rogue.issuer), "rp", undefined, undefined, insecure);
  });
  after(() => rogue.close());

  /** One authorization request: the rogue redirects straight back with a code. */
  async function authorize(): Promise<{ login: Login; callback: URL }> {
    const login = await startLogin(config);
    const response = await fetch(login.url, { redirect: "manual" });
    assert.equal(response.status, 302);
    return { login, callback: new URL(response.headers.get("location")!) };
  }

  test('"good" succeeds and the requests are recorded', { timeout: 10_000 }, async () => {
    rogue.mode = "good";
    const { login, callback } = await authorize();
    const tokens = await finish(config, login, callback);
    assert.equal(tokens.token_type, "bearer");
    const claims = tokens.claims()!;
    assert.equal(claims.sub, "rogue-1");
    assert.deepEqual(claims.groups, ["g"]);
    const authorization = rogue.authorizationRequests.at(-1)!;
    assert.equal(authorization.code_challenge_method, "S256");
    assert.equal(authorization.nonce, login.nonce);
    const token = rogue.tokenRequests.at(-1)!;
    assert.equal(token.code_verifier, login.verifier);
    assert.equal(token.code, callback.searchParams.get("code"));
    assert.equal(token.redirect_uri, REDIRECT_URI);
  });

  /** openid-client's refusal: its code, and the JWT claim it found wrong if any. */
  function refusal(error: unknown): string {
    const { code, cause } = error as { code?: string; cause?: { cause?: { claim?: string } } };
    const claim = cause?.cause?.claim;
    return claim ? `${code} ${claim}` : String(code);
  }

  const bad: Array<[RogueMode, string]> = [
    ["wrong-audience", "OAUTH_JWT_CLAIM_COMPARISON_FAILED aud"],
    ["wrong-issuer", "OAUTH_JWT_CLAIM_COMPARISON_FAILED iss"],
    ["wrong-nonce", "OAUTH_JWT_CLAIM_COMPARISON_FAILED nonce"],
    ["expired", "OAUTH_JWT_TIMESTAMP_CHECK_FAILED exp"],
    ["not-yet-valid", "OAUTH_JWT_TIMESTAMP_CHECK_FAILED nbf"],
    ["alg-none", "OAUTH_INVALID_RESPONSE"],
    ["unknown-key", "OAUTH_KEY_SELECTION_FAILED"],
  ];
  for (const [mode, expected] of bad) {
    test(`"${mode}": openid-client refuses the ID token`, { timeout: 10_000 }, async () => {
      rogue.mode = mode;
      try {
        // The signature of an ID token from the token endpoint is checked only with
        // enableNonRepudiationChecks (see the next test); the rest is checked either way.
        const checked = await client.discovery(new URL(rogue.issuer), "rp", undefined, undefined, insecure);
        client.enableNonRepudiationChecks(checked);
        for (const configuration of mode === "unknown-key" ? [checked] : [config, checked]) {
          const { login, callback } = await authorize();
          let refused = "accepted";
          await finish(configuration, login, callback).catch((error: unknown) => (refused = refusal(error)));
          assert.equal(refused, expected);
        }
      } finally {
        rogue.mode = "good";
      }
    });
  }

  test('"unknown-key" is accepted by openid-client without enableNonRepudiationChecks (OIDC Core 3.1.3.7: TLS to the token endpoint may stand for the signature)', { timeout: 10_000 }, async () => {
    rogue.mode = "unknown-key";
    try {
      const { login, callback } = await authorize();
      assert.equal((await finish(config, login, callback)).claims()!.sub, "rogue-1");
    } finally {
      rogue.mode = "good";
    }
  });

  test("a code is exchanged once: its replay is refused", { timeout: 10_000 }, async () => {
    const { login, callback } = await authorize();
    await finish(config, login, callback);
    await assert.rejects(finish(config, login, callback), (error: Error & { error?: string }) => error.error === "invalid_grant");
  });

  test("a verifier that does not match the challenge is refused (and accepted only in ignore-pkce)", { timeout: 10_000 }, async () => {
    const { login, callback } = await authorize();
    await assert.rejects(finish(config, login, callback, client.randomPKCECodeVerifier()), (error: Error & { error?: string; error_description?: string }) => error.error === "invalid_grant" && /PKCE/.test(error.error_description ?? ""));

    rogue.mode = "ignore-pkce";
    try {
      const other = await authorize();
      const tokens = await finish(config, other.login, other.callback, client.randomPKCECodeVerifier());
      assert.equal(tokens.claims()!.sub, "rogue-1");
    } finally {
      rogue.mode = "good";
    }
  });

  test("a registered client's secret is required, by client_secret_basic or client_secret_post", { timeout: 10_000 }, async () => {
    rogue.addClient({ client_id: "confidential", client_secret: "s3cret" });
    for (const auth of [client.ClientSecretBasic("s3cret"), client.ClientSecretPost("s3cret")]) {
      const confidential = await client.discovery(new URL(rogue.issuer), "confidential", undefined, auth, insecure);
      const login = await startLogin(confidential);
      const response = await fetch(login.url, { redirect: "manual" });
      const tokens = await finish(confidential, login, new URL(response.headers.get("location")!));
      assert.equal(tokens.claims()!.aud, "confidential");
    }
    const wrong = await client.discovery(new URL(rogue.issuer), "confidential", undefined, client.ClientSecretPost("guess"), insecure);
    const login = await startLogin(wrong);
    const response = await fetch(login.url, { redirect: "manual" });
    await assert.rejects(finish(wrong, login, new URL(response.headers.get("location")!)), (error: Error & { status?: number }) => error.status === 401);
  });
});
