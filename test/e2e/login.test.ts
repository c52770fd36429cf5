import assert from "node:assert/strict";
import { createHash, randomBytes } from "node:crypto";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, describe, test } from "node:test";
import * as oidc from "openid-client";
import { builtInRole } from "../../src/access/capabilities.js";
import { bootstrapOrganization } from "../../src/server/bootstrap.js";
import { chromiumSkip, launchChromium } from "../support/browser.js";
import { dropFresh, testDatabases } from "../support/databases.js";
import { startRogueIdp, type RogueIdp, type RogueMode } from "../support/rogue-idp.js";
import { startTestIdp, type TestIdp } from "../support/test-idp.js";
import { startTestServer, type TestServer } from "../support/test-server.js";

/**
 * People sign in (docs/authorization.md, "People sign in"), through the real wire: the server's
 * login routes against a real OpenID Provider (oidc-provider) and a misbehaving one, plain HTTP
 * for the client's side, and headless Chromium for a person's browser. On SQLite and PostgreSQL.
 */

const viewer = builtInRole("viewer").uid;
const editor = builtInRole("editor").uid;
/** Never fetched: the client's redirect target, where the test reads the code from the Location header. */
const CLIENT_REDIRECT = "http://127.0.0.1:9/callback";

type Json = Record<string, unknown>;

function pkce() {
  const verifier = randomBytes(32).toString("base64url");
  return { verifier, challenge: createHash("sha256").update(verifier).digest("base64url") };
}

for (const database of await testDatabases()) {
  describe(`people sign in (${database.name})`, { skip: database.skip }, () => {
    let idp: TestIdp;
    let rogue: RogueIdp;
    let server: TestServer;
    let dbUrl: string;

    before(async () => {
      idp = await startTestIdp();
      rogue = await startRogueIdp();
      dbUrl = await database.fresh();
      server = await startTestServer({
        apiUrl: "listen",
        dbUrl,
        organizationCreation: "anyone",
        upstreamIssuers: { allowHttp: true, allowPrivateAddresses: true },
        login: { issuer: idp.issuer, clientId: "platform", clientSecret: "s3cret", redirectOrigins: ["https://console.example.com"] },
      });
      await idp.addClient({ client_id: "platform", client_secret: "s3cret", redirect_uris: [callbackUrl()], token_endpoint_auth_method: "client_secret_post" });
      idp.setAccount("ada", { email: "ada@example.com", email_verified: true, name: "Ada Lovelace" });
      idp.setAccount("eve", { email: "eve@example.com", email_verified: false });
    });
    after(async () => {
      await server?.close();
      await idp?.close();
      await rogue?.close();
      if (dbUrl) await dropFresh(dbUrl);
    });

    const callbackUrl = () => `${server.apiUrl}/auth/v1/callback`;
    const api = (path: string, init: RequestInit & { token?: string } = {}) =>
      fetch(`${server.apiUrl}${path}`, { ...init, redirect: "manual", headers: { ...(init.token ? { authorization: `Bearer ${init.token}` } : {}), ...(init.headers as Record<string, string>) } });
    const json = async (res: Response) => (await res.json()) as Json;
    const form = (fields: Record<string, string>) => ({ method: "POST", headers: { "content-type": "application/x-www-form-urlencoded" }, body: new URLSearchParams(fields).toString() });

    /** GET /auth/v1/login: the 302 to the provider, and what the client keeps. */
    async function startLogin(options: { identityProvider?: string; redirectUri?: string } = {}) {
      const { verifier, challenge } = pkce();
      const state = randomBytes(8).toString("hex");
      const redirectUri = options.redirectUri ?? CLIENT_REDIRECT;
      const query = new URLSearchParams({ redirect_uri: redirectUri, code_challenge: challenge, code_challenge_method: "S256", state });
      if (options.identityProvider) query.set("identity_provider", options.identityProvider);
      const res = await api(`/auth/v1/login?${query}`);
      assert.equal(res.status, 302, await res.clone().text());
      return { location: res.headers.get("location")!, verifier, state, redirectUri };
    }

    /** The provider's redirect back to the server: GET the callback, answer the 302 to the client. */
    async function callback(url: URL | string): Promise<Response> {
      return fetch(url, { redirect: "manual" });
    }

    async function redeem(code: string, verifier: string, redirectUri = CLIENT_REDIRECT): Promise<Response> {
      return api("/auth/v1/token", form({ grant_type: "authorization_code", code, code_verifier: verifier, redirect_uri: redirectUri }));
    }

    /** A whole browser login over HTTP as `login`: the platform tokens. */
    async function signIn(login: string, identityProvider?: string): Promise<{ token: string; refreshToken: string; expiry: string }> {
      const started = await startLogin({ identityProvider });
      const back = await callback(await idp.loginOverHttp(started.location, login));
      assert.equal(back.status, 302, await back.text());
      const toClient = new URL(back.headers.get("location")!);
      assert.equal(toClient.origin + toClient.pathname, CLIENT_REDIRECT);
      assert.equal(toClient.searchParams.get("state"), started.state, "the client's own state comes back");
      assert.equal(toClient.searchParams.get("error"), null, toClient.searchParams.get("error_description") ?? "");
      const answer = await redeem(toClient.searchParams.get("code")!, started.verifier);
      assert.equal(answer.status, 200, await answer.clone().text());
      return (await answer.json()) as { token: string; refreshToken: string; expiry: string };
    }

    async function invite(fields: Json = {}, group = server.org.uid, token = server.ownerToken): Promise<string> {
      return (await inviteWithUid(fields, group, token)).code;
    }

    async function inviteWithUid(fields: Json = {}, group = server.org.uid, token = server.ownerToken): Promise<{ code: string; uid: string }> {
      const body = { roleUid: viewer, ttl: "3600s", ...fields };
      const res = await api(`/iam/v2/groupInvites/${group}`, { method: "POST", token, headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
      assert.equal(res.status, 200, await res.clone().text());
      const made = await json(res);
      return { code: made.code as string, uid: made.uid as string };
    }

    const register = (token: string, code: string) => api("/auth/v1/register", { method: "POST", token, headers: { "content-type": "application/json" }, body: JSON.stringify({ code }) });
    const whoami = async (token: string) => {
      const res = await api("/auth/v1/ok", { token });
      assert.equal(res.status, 200, await res.clone().text());
      return json(res);
    };

    test("a person of the server-wide provider may only register until an invite makes them a member with its role", async () => {
      const tokens = await signIn("ada");
      assert.ok(Date.parse(tokens.expiry) > Date.now());
      assert.match(tokens.expiry, /\.\d{3}Z$/, "times carry milliseconds");
      const before = await whoami(tokens.token);
      assert.equal(before.email, "ada@example.com", "the provider verified it");
      assert.equal((before.profile as Json).name, "Ada Lovelace");
      assert.equal(before.issuer, server.apiUrl);
      assert.deepEqual(before.capabilities ?? [], []);
      const refused = await api("/iam/v2/groups", { token: tokens.token });
      assert.equal(refused.status, 403, "an unregistered person may not list groups");
      assert.match(String((await json(refused)).message), /not registered/);

      const session = await register(tokens.token, await invite());
      assert.equal(session.status, 200, await session.clone().text());
      const { identity, group } = await json(session);
      assert.equal(identity, before.subject);
      assert.equal(group, server.org.uid);
      const after = await whoami(tokens.token);
      const held = after.capabilities as Array<{ group: Json; role: Json; capabilities: string[] }>;
      assert.deepEqual(held.map((c) => [c.group.id, c.role.id]), [[server.org.uid, viewer]]);
      assert.ok(held[0].capabilities.includes("groups.list"));
      assert.equal((await api("/iam/v2/groups", { token: tokens.token })).status, 200, "the same token now carries the invite's grants");
      const events = await server.store.db.selectFrom("events").select(["type", "subject", "group_uid"]).where("type", "like", "%auth.registered%").execute();
      assert.deepEqual(events.map((e) => [e.subject, e.group_uid]), [[identity, server.org.uid]]);
    });

    test("under --org-creation anyone, an unregistered person may create an organization, and owns it", async () => {
      idp.setAccount("noor", { email: "noor@example.com", email_verified: true });
      const noor = await signIn("noor");
      const denied = await api(`/iam/v2/groups/${server.org.uid}`, { method: "POST", token: noor.token, headers: { "content-type": "application/json" }, body: JSON.stringify({ name: "team" }) });
      assert.equal(denied.status, 403, "a group below someone else's organization: no");
      const made = await api("/iam/v2/groups", { method: "POST", token: noor.token, headers: { "content-type": "application/json" }, body: JSON.stringify({ name: `noor-${database.name}` }) });
      assert.equal(made.status, 200, await made.clone().text());
      const org = (await json(made)).uid as string;
      const held = (await whoami(noor.token)).capabilities as Array<{ group: Json; role: Json }>;
      assert.deepEqual(held.map((c) => [c.group.id, c.role.id]), [[org, builtInRole("owner").uid]]);
      assert.equal((await api("/iam/v2/groups", { token: noor.token })).status, 200, "registered by owning it");
    });

    test("an unregistered person may also join by RedeemGroupInvite (admits_unregistered), which creates their identity", async () => {
      idp.setAccount("ivy", { email: "ivy@example.com", email_verified: true });
      const ivy = await signIn("ivy");
      assert.equal((await api("/iam/v2/groups", { token: ivy.token })).status, 403);
      const redeemed = await api("/iam/v2/groupInvites:redeem", { method: "POST", token: ivy.token, headers: { "content-type": "application/json" }, body: JSON.stringify({ code: await invite() }) });
      assert.equal(redeemed.status, 200, await redeemed.clone().text());
      assert.equal((await json(redeemed)).groupUid, server.org.uid);
      assert.equal((await api("/iam/v2/groups", { token: ivy.token })).status, 200, "registered by the redemption");
    });

    test("a refresh token rotates; using a spent one revokes its whole family", async () => {
      const first = await signIn("ada");
      const exchange = (token: string) => api("/sts/exchange_refresh_token", { method: "POST", token });
      const rotated = await exchange(first.refreshToken);
      assert.equal(rotated.status, 200, await rotated.clone().text());
      const pair = (await rotated.json()) as { token: { token: string; expiry: string }; refreshToken: { token: string; expiry: string } };
      assert.notEqual(pair.refreshToken.token, first.refreshToken);
      assert.equal((await whoami(pair.token.token)).email, "ada@example.com");
      assert.equal((await exchange(first.refreshToken)).status, 401, "a spent refresh token is refused");
      assert.equal((await exchange(pair.refreshToken.token)).status, 401, "and its reuse revoked the family: the newest token too");
      assert.equal((await exchange("not-a-token")).status, 401);
    });

    test("the one-time code is redeemed once, with the verifier of its challenge, for its redirect URI", async () => {
      const started = await startLogin();
      const back = await callback(await idp.loginOverHttp(started.location, "ada"));
      const code = new URL(back.headers.get("location")!).searchParams.get("code")!;
      const wrong = await redeem(code, pkce().verifier);
      assert.equal(wrong.status, 400);
      assert.equal((await json(wrong)).error, "invalid_grant", "a verifier that does not hash to the challenge");
      const again = await redeem(code, started.verifier);
      assert.equal((await json(again)).error, "invalid_grant", "a code is spent by its first redemption, even a failed one");

      const second = await startLogin();
      const code2 = new URL((await callback(await idp.loginOverHttp(second.location, "ada"))).headers.get("location")!).searchParams.get("code")!;
      assert.equal((await json(await redeem(code2, second.verifier, "http://127.0.0.1:9/other"))).error, "invalid_grant", "another redirect_uri");
    });

    test("redirects go to loopback addresses and allowed origins only", async () => {
      const { challenge } = pkce();
      for (const redirectUri of ["https://evil.example.com/cb", "http://127.0.0.1.evil.example.com:80/cb", "javascript:alert(1)", "http://127.0.0.1:9/cb#frag", "https://console.example.com.evil.example/cb"]) {
        const res = await api(`/auth/v1/login?${new URLSearchParams({ redirect_uri: redirectUri, code_challenge: challenge, code_challenge_method: "S256", state: "s" })}`);
        assert.equal(res.status, 400, redirectUri);
        assert.equal(res.headers.get("location"), null, `no redirect anywhere for ${redirectUri}`);
      }
      await startLogin({ redirectUri: "https://console.example.com/signed-in" });
      await startLogin({ redirectUri: "http://[::1]:4000/cb" });
      const noPkce = await api(`/auth/v1/login?${new URLSearchParams({ redirect_uri: CLIENT_REDIRECT, state: "s" })}`);
      assert.equal(noPkce.status, 400, "PKCE is required");
    });

    test("a callback with an unknown or already used state is refused", async () => {
      const started = await startLogin();
      const landing = await idp.loginOverHttp(started.location, "ada");
      const forged = new URL(landing);
      forged.searchParams.set("state", "forged");
      assert.equal((await callback(forged)).status, 400, "a state the server never sent");
      assert.equal((await callback(landing)).status, 302);
      assert.equal((await callback(landing)).status, 400, "a state is used once (a replayed callback)");
    });

    test("/sts/exchange without identity trades a person's ID token for their own platform tokens", async () => {
      const config = await oidc.discovery(new URL(idp.issuer), "platform", "s3cret", oidc.ClientSecretPost("s3cret"), { execute: [oidc.allowInsecureRequests] });
      const verifier = oidc.randomPKCECodeVerifier();
      const state = oidc.randomState();
      const url = oidc.buildAuthorizationUrl(config, { redirect_uri: callbackUrl(), scope: "openid email profile", state, code_challenge: await oidc.calculatePKCECodeChallenge(verifier), code_challenge_method: "S256" });
      const answer = await oidc.authorizationCodeGrant(config, await idp.loginOverHttp(url, "ada"), { pkceCodeVerifier: verifier, expectedState: state, idTokenExpected: true });
      const exchanged = await api("/sts/exchange", { method: "POST", token: answer.id_token });
      assert.equal(exchanged.status, 200, await exchanged.clone().text());
      const raw = (await exchanged.json()) as { token: string; expiry: string; refreshToken: string };
      assert.ok(raw.refreshToken, "the hosted RawToken: token, expiry and a refresh token");
      assert.equal((await whoami(raw.token)).email, "ada@example.com");
      assert.equal((await api("/sts/exchange", { method: "POST", token: server.ownerToken })).status, 401, "our own token is no provider's ID token");
    });

    test("a terminal signs in with a device code (RFC 8628) confirmed on the server's own page", async () => {
      const deviceCode = async () => json(await api("/auth/v1/device/code", form({})));
      const poll = async (code: string) => json(await api("/auth/v1/token", form({ grant_type: "urn:ietf:params:oauth:grant-type:device_code", device_code: code })));
      const eager = await deviceCode();
      assert.equal((await poll(eager.device_code as string)).error, "authorization_pending");
      assert.equal((await poll(eager.device_code as string)).error, "slow_down", "polling faster than the interval");

      const started = await deviceCode();
      assert.match(String(started.user_code), /^[B-DF-HJ-NP-TV-XZ]{4}-[B-DF-HJ-NP-TV-XZ]{4}$/);
      assert.equal(started.verification_uri_complete, `${server.apiUrl}/auth/v1/device?user_code=${started.user_code}`);
      const confirm = (headers: Record<string, string>) =>
        api("/auth/v1/device", { ...form({ user_code: String(started.user_code).toLowerCase() }), headers: { "content-type": "application/x-www-form-urlencoded", ...headers } });
      const crossSite = await confirm({ origin: "https://evil.example.com", "sec-fetch-site": "cross-site" });
      assert.equal(crossSite.status, 403, "another site may not confirm a code for its visitor (login CSRF)");
      const confirmed = await confirm({ origin: server.apiUrl, "sec-fetch-site": "same-origin" });
      assert.equal(confirmed.status, 302, await confirmed.clone().text());
      const done = await callback(await idp.loginOverHttp(confirmed.headers.get("location")!, "ada"));
      assert.equal(done.status, 200);
      assert.match(await done.text(), /signed in/i);
      assert.equal((await confirm({})).status, 400, "a code is confirmed once");
      const granted = await poll(started.device_code as string);
      assert.ok(granted.token && granted.refreshToken, JSON.stringify(granted));
      assert.equal((await whoami(granted.token as string)).email, "ada@example.com");
      assert.equal((await poll(started.device_code as string)).error, "invalid_grant", "a device code yields its tokens once");
      assert.equal((await poll("unknown")).error, "expired_token");
    });

    describe("invites", () => {
      test("a single-use invite admits one person; an expired one none", async () => {
        const code = await invite({ singleUse: true, roleUid: editor });
        const ada = await signIn("ada");
        assert.equal((await register(ada.token, code)).status, 200);
        idp.setAccount("grace", { email: "grace@example.com", email_verified: true });
        const grace = await signIn("grace");
        const used = await register(grace.token, code);
        assert.equal(used.status, 400);
        assert.match(JSON.stringify(await json(used)), /INVITE_USED/);
        const expiring = await inviteWithUid();
        // Its hour passed.
        await server.store.db.updateTable("group_invites").set({ expire_time: Date.now() - 1 }).where("uid", "=", expiring.uid).execute();
        const expired = await register(grace.token, expiring.code);
        assert.match(JSON.stringify(await json(expired)), /INVITE_EXPIRED/);
      });

      test("an invite bound to an email admits only the person whose provider verified that address", async () => {
        const code = await invite({ email: "Ada@Example.com" });
        const eve = await signIn("eve");
        const other = await register(eve.token, code);
        assert.equal(other.status, 400);
        assert.match(JSON.stringify(await json(other)), /INVITE_EMAIL_MISMATCH/, "eve's address is unverified and not the invite's");
        const ada = await signIn("ada");
        assert.equal((await register(ada.token, code)).status, 200, "the match ignores case");
      });
    });

    describe("an organization's identity provider", () => {
      let providerUid: string;
      before(async () => {
        const body = { name: "corp", defaultRole: viewer, oidc: { issuer: idp.issuer, clientId: "corp", clientSecret: "corp-secret", groupsClaim: "groups", additionalScopes: ["groups"] } };
        const made = await api(`/iam/v2/identityProviders/${server.org.uid}`, { method: "POST", token: server.ownerToken, headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
        assert.equal(made.status, 200, await made.clone().text());
        providerUid = (await json(made)).uid as string;
        await idp.addClient({ client_id: "corp", client_secret: "corp-secret", redirect_uris: [callbackUrl()], token_endpoint_auth_method: "client_secret_post" });
        const mapping = { externalGroupId: "admins", roleUid: editor };
        const mapped = await api(`/iam/v2/externalGroupRoleMappings/${providerUid}`, { method: "POST", token: server.ownerToken, headers: { "content-type": "application/json" }, body: JSON.stringify(mapping) });
        assert.equal(mapped.status, 200, await mapped.clone().text());
      });

      test("admits its people with its default role, and maps their groups at every login", async () => {
        idp.setAccount("linus", { email: "linus@corp.example", email_verified: true, groups: ["admins", "unmapped"] });
        const first = await whoami((await signIn("linus", providerUid)).token);
        assert.ok(String(first.subject).startsWith(`${server.org.uid}/`), "the person's identity lives in the organization");
        const roles = (w: Json) => (w.capabilities as Array<{ group: Json; role: Json }>).map((c) => `${c.group.id} ${c.role.id}`).sort();
        assert.deepEqual(roles(first), [`${server.org.uid} ${editor}`, `${server.org.uid} ${viewer}`].sort());

        idp.setAccount("linus", { email: "linus@corp.example", email_verified: true, groups: [] });
        const next = await whoami((await signIn("linus", providerUid)).token);
        assert.equal(next.subject, first.subject, "the same person, the same identity");
        assert.deepEqual(roles(next), [`${server.org.uid} ${viewer}`], "a group removed at the provider takes its binding away at the next login");
      });

      test("its people reach their organization only", async () => {
        const other = await bootstrapOrganization(server.store, `beta-${database.name}`, Date.now());
        idp.setAccount("mia", { email: "mia@corp.example", email_verified: true });
        const mia = await signIn("mia", providerUid);
        assert.equal((await api(`/iam/v2/groups/${server.org.uid}`, { token: mia.token })).status, 200);
        assert.equal((await api(`/iam/v2/groups/${other.organization.uid}`, { token: mia.token })).status, 403, "organization A's provider gives nothing in organization B");
        const otherOwner = (await server.server.tokens.issue({ subject: other.identity.uid, audience: server.apiUrl })).token;
        const code = await invite({}, other.organization.uid, otherOwner);
        const joined = await register(mia.token, code);
        assert.equal(joined.status, 400, "nor may its people join B by an invite: they belong to A");
        assert.match(JSON.stringify(await json(joined)), /IDENTITY_OUT_OF_SCOPE/);
      });

      test("an unknown provider is refused before anyone is redirected", async () => {
        const { challenge } = pkce();
        const res = await api(`/auth/v1/login?${new URLSearchParams({ redirect_uri: CLIENT_REDIRECT, code_challenge: challenge, code_challenge_method: "S256", state: "s", identity_provider: `${server.org.uid}/0123456789abcdef` })}`);
        assert.equal(res.status, 400);
        assert.equal(res.headers.get("location"), null);
      });
    });

    describe("ID tokens that do not verify", () => {
      let rogueUid: string;
      before(async () => {
        const body = { name: "rogue", defaultRole: viewer, oidc: { issuer: rogue.issuer, clientId: "rogue-client", clientSecret: "rogue-secret" } };
        const made = await api(`/iam/v2/identityProviders/${server.org.uid}`, { method: "POST", token: server.ownerToken, headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
        assert.equal(made.status, 200, await made.clone().text());
        rogueUid = (await json(made)).uid as string;
        rogue.addClient({ client_id: "rogue-client", client_secret: "rogue-secret" });
        rogue.setClaims({ sub: "rogue-user", email: "r@example.com", email_verified: true });
      });

      /** A login at the rogue provider in `mode`: what the client is redirected to. */
      async function rogueLogin(mode: RogueMode): Promise<URL> {
        rogue.mode = mode;
        const started = await startLogin({ identityProvider: rogueUid });
        const atProvider = await fetch(started.location, { redirect: "manual" });
        const back = await callback(atProvider.headers.get("location")!);
        assert.equal(back.status, 302);
        return new URL(back.headers.get("location")!);
      }

      test("a good one signs in, with our PKCE verifier and nonce at the provider", async () => {
        const toClient = await rogueLogin("good");
        assert.ok(toClient.searchParams.get("code"));
        const asked = rogue.authorizationRequests.at(-1)!;
        assert.equal(asked.code_challenge_method, "S256");
        assert.ok(asked.nonce && asked.state);
        const verifier = rogue.tokenRequests.at(-1)!.code_verifier;
        assert.equal(createHash("sha256").update(verifier).digest("base64url"), asked.code_challenge, "the server proves PKCE to the provider");
      });

      for (const mode of ["wrong-audience", "expired", "not-yet-valid", "alg-none", "wrong-nonce", "wrong-issuer", "unknown-key"] as const) {
        test(`${mode}: refused, and the client is told access_denied`, async () => {
          const toClient = await rogueLogin(mode);
          assert.equal(toClient.searchParams.get("error"), "access_denied");
          assert.equal(toClient.searchParams.get("code"), null);
        });
      }
    });

    test("a person signs in in a real browser (Chromium) and the client redeems the code", { skip: chromiumSkip }, async () => {
      const seen: URL[] = [];
      const client = http.createServer((req, res) => {
        const url = new URL(req.url ?? "/", "http://127.0.0.1");
        if (url.pathname === "/callback") seen.push(url);
        res.writeHead(200, { "content-type": "text/html" }).end("<!doctype html><title>Client</title><p>ok</p>");
      });
      await new Promise<void>((resolve) => client.listen(0, "127.0.0.1", resolve));
      const redirectUri = `http://127.0.0.1:${(client.address() as AddressInfo).port}/callback`;
      const { verifier, challenge } = pkce();
      const browser = await launchChromium();
      try {
        const page = await browser.newPage();
        await page.goto(`${server.apiUrl}/auth/v1/login?${new URLSearchParams({ redirect_uri: redirectUri, code_challenge: challenge, code_challenge_method: "S256", state: "browser-state" })}`);
        await page.fill("input[name=login]", "ada");
        await page.fill("input[name=password]", "any password");
        await Promise.all([page.waitForURL((url) => url.href.startsWith(redirectUri)), page.click("button[type=submit]")]);
        assert.equal(seen.length, 1);
        assert.equal(seen[0].searchParams.get("state"), "browser-state");
        const answer = await redeem(seen[0].searchParams.get("code")!, verifier, redirectUri);
        assert.equal(answer.status, 200);
        assert.equal((await whoami(((await answer.json()) as { token: string }).token)).email, "ada@example.com");
      } finally {
        await browser.close();
        client.closeAllConnections();
        await new Promise<void>((resolve) => client.close(() => resolve()));
      }
    });
  });
}
