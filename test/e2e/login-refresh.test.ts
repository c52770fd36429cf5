import assert from "node:assert/strict";
import { createHash, randomBytes } from "node:crypto";
import { after, before, describe, test } from "node:test";
import { builtInRole } from "../../src/access/capabilities.js";
import { isSealed } from "../../src/store/secret-box.js";
import { dropFresh, testDatabases } from "../support/databases.js";
import { openStoredSecret } from "../support/sealed-secrets.js";
import { startTestIdp, type TestIdp } from "../support/test-idp.js";
import { startTestServer, type TestServer } from "../support/test-server.js";

/**
 * A refresh asks the person's provider again (docs/authorization.md, "People sign in"), through
 * the real wire against a real OpenID Provider (oidc-provider) that issues refresh tokens: a
 * person taken out of a mapped group loses its role at the next refresh, a person the provider
 * deleted loses the session, deleting an IdentityProvider ends the sessions it started, an
 * organization's provider's sessions live 12 hours, and a provider that cannot be asked defers
 * the refresh without spending it. On SQLite and PostgreSQL.
 */

const viewer = builtInRole("viewer").uid;
const editor = builtInRole("editor").uid;
const CLIENT_REDIRECT = "http://127.0.0.1:9/callback";
const HOUR = 3600_000;

type Json = Record<string, unknown>;
interface Pair {
  token: { token: string; expiry: string };
  refreshToken: { token: string; expiry: string };
}

for (const database of await testDatabases()) {
  describe(`a refresh asks the provider again (${database.name})`, { skip: database.skip }, () => {
    let idp: TestIdp;
    let server: TestServer;
    let dbUrl: string;
    /** An organization's provider that issues refresh tokens, mapping the group `admins` to editor. */
    let corp: string;
    /** An organization's provider that issues none. */
    let plain: string;

    const api = (path: string, init: RequestInit & { token?: string } = {}) =>
      fetch(`${server.apiUrl}${path}`, { ...init, redirect: "manual", headers: { ...(init.token ? { authorization: `Bearer ${init.token}` } : {}), ...(init.headers as Record<string, string>) } });
    const asOwner = async (method: string, path: string, body?: Json) => {
      const res = await api(path, { method, token: server.ownerToken, headers: { "content-type": "application/json" }, body: body === undefined ? undefined : JSON.stringify(body) });
      assert.equal(res.status, 200, await res.clone().text());
      return (await res.json()) as Json;
    };
    const callbackUrl = () => `${server.apiUrl}/auth/v1/callback`;

    before(async () => {
      idp = await startTestIdp();
      dbUrl = await database.fresh();
      server = await startTestServer({
        apiUrl: "listen",
        dbUrl,
        upstreamIssuers: { allowHttp: true, allowPrivateAddresses: true },
        login: { issuer: idp.issuer, clientId: "platform", clientSecret: "s3cret" },
      });
      await idp.addClient({ client_id: "platform", client_secret: "s3cret", redirect_uris: [callbackUrl()], token_endpoint_auth_method: "client_secret_post", refreshTokens: true });
      await idp.addClient({ client_id: "corp", client_secret: "corp-secret", redirect_uris: [callbackUrl()], token_endpoint_auth_method: "client_secret_post", refreshTokens: true });
      await idp.addClient({ client_id: "plain", client_secret: "plain-secret", redirect_uris: [callbackUrl()], token_endpoint_auth_method: "client_secret_post" });
      const oidc = (clientId: string) => ({ issuer: idp.issuer, clientId, clientSecret: `${clientId}-secret`, groupsClaim: "groups", additionalScopes: ["groups"] });
      corp = (await asOwner("POST", `/iam/v2/identityProviders/${server.org.uid}`, { name: "corp", defaultRole: viewer, oidc: oidc("corp") })).uid as string;
      plain = (await asOwner("POST", `/iam/v2/identityProviders/${server.org.uid}`, { name: "plain", defaultRole: viewer, oidc: oidc("plain") })).uid as string;
      await asOwner("POST", `/iam/v2/externalGroupRoleMappings/${corp}`, { externalGroupId: "admins", roleUid: editor });
    });
    after(async () => {
      await server?.close();
      await idp?.close();
      if (dbUrl) await dropFresh(dbUrl);
    });

    /** A whole browser login over HTTP as `login` (through `identityProvider`, else the server's own): the platform tokens. */
    async function signIn(login: string, identityProvider?: string): Promise<{ token: string; refreshToken: string }> {
      const verifier = randomBytes(32).toString("base64url");
      const query = new URLSearchParams({ redirect_uri: CLIENT_REDIRECT, code_challenge: createHash("sha256").update(verifier).digest("base64url"), code_challenge_method: "S256", state: "s" });
      if (identityProvider) query.set("identity_provider", identityProvider);
      const started = await api(`/auth/v1/login?${query}`);
      assert.equal(started.status, 302, await started.text());
      const back = await fetch(await idp.loginOverHttp(started.headers.get("location")!, login), { redirect: "manual" });
      const code = new URL(back.headers.get("location")!).searchParams.get("code");
      assert.ok(code, back.headers.get("location") ?? String(back.status));
      const form = new URLSearchParams({ grant_type: "authorization_code", code, code_verifier: verifier, redirect_uri: CLIENT_REDIRECT });
      const answer = await api("/auth/v1/token", { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded" }, body: form.toString() });
      assert.equal(answer.status, 200, await answer.clone().text());
      return (await answer.json()) as { token: string; refreshToken: string };
    }

    const refresh = (refreshToken: string) => api("/sts/exchange_refresh_token", { method: "POST", token: refreshToken });
    async function refreshed(refreshToken: string): Promise<Pair> {
      const res = await refresh(refreshToken);
      assert.equal(res.status, 200, await res.clone().text());
      return (await res.json()) as Pair;
    }
    /** The roles WhoAmI shows for `token`, as `<group> <role>`. */
    async function roles(token: string): Promise<string[]> {
      const res = await api("/auth/v1/ok", { token });
      assert.equal(res.status, 200, await res.clone().text());
      return (((await res.json()) as Json).capabilities as Array<{ group: Json; role: Json }>).map((c) => `${c.group.id as string} ${c.role.id as string}`).sort();
    }
    const familyOf = async (refreshToken: string) => {
      const hash = createHash("sha256").update(refreshToken).digest("hex");
      const { family } = await server.store.db.selectFrom("refresh_tokens").select("family").where("token_hash", "=", hash).executeTakeFirstOrThrow();
      return server.store.db.selectFrom("refresh_tokens").selectAll().where("family", "=", family).orderBy("create_time").execute();
    };

    test("a person taken out of a mapped group at the provider loses its role at the next refresh, and gets it back", async () => {
      idp.setAccount("linus", { email: "linus@corp.example", email_verified: true, groups: ["admins"] });
      const first = await signIn("linus", corp);
      const org = server.org.uid;
      assert.deepEqual(await roles(first.token), [`${org} ${editor}`, `${org} ${viewer}`].sort());

      idp.setAccount("linus", { email: "linus@corp.example", email_verified: true, groups: [] });
      const asked = idp.refreshes;
      const pair = await refreshed(first.refreshToken);
      assert.deepEqual(await roles(pair.token.token), [`${org} ${viewer}`], "the mapped role is gone");
      assert.equal(idp.refreshes, asked + 1, "the refresh asked the provider");

      idp.setAccount("linus", { email: "linus@corp.example", email_verified: true, groups: ["admins"] });
      const again = await refreshed(pair.refreshToken.token);
      assert.deepEqual(await roles(again.token.token), [`${org} ${editor}`, `${org} ${viewer}`].sort(), "and back when the group is");

      const rows = await familyOf(again.refreshToken.token);
      const live = rows.filter((r) => r.used_time === null);
      assert.equal(live.length, 1);
      assert.ok(live[0].upstream_refresh_token !== "" && isSealed(live[0].upstream_refresh_token), "the provider's refresh token is kept sealed");
      assert.notEqual(await openStoredSecret(server.store.db, live[0].upstream_refresh_token), live[0].upstream_refresh_token);
      assert.ok(rows.filter((r) => r.used_time !== null).every((r) => r.upstream_refresh_token === ""), "spent tokens no longer hold it");
    });

    test("a person the provider deleted loses the session at the next refresh: 401, the family revoked", async () => {
      for (const [login, provider] of [["mia", corp], ["zed", undefined]] as const) {
        idp.setAccount(login, { email: `${login}@corp.example`, email_verified: true });
        const first = await signIn(login, provider);
        const pair = await refreshed(first.refreshToken);
        idp.removeAccount(login);
        const ended = await refresh(pair.refreshToken.token);
        assert.equal(ended.status, 401, `${login}: the refresh was answered ${ended.status}`);
        assert.equal(ended.headers.get("www-authenticate"), 'Bearer error="invalid_token"');
        assert.equal((await refresh(pair.refreshToken.token)).status, 401, `${login}: refused again`);
        assert.ok((await familyOf(pair.refreshToken.token)).every((r) => r.revoked_time !== null), `${login}: the family is revoked`);
      }
    });

    test("deleting an identity provider ends the sessions it started, even where it issued no refresh token", async () => {
      idp.setAccount("pat", { email: "pat@corp.example", email_verified: true });
      const first = await signIn("pat", plain);
      const asked = idp.refreshes;
      const pair = await refreshed(first.refreshToken);
      assert.equal(idp.refreshes, asked, "a provider that issued no refresh token is not asked");
      assert.deepEqual(await roles(pair.token.token), [`${server.org.uid} ${viewer}`]);
      const deleted = await api(`/iam/v2/identityProviders/${plain}`, { method: "DELETE", token: server.ownerToken });
      assert.equal(deleted.status, 200, await deleted.text());
      const ended = await refresh(pair.refreshToken.token);
      assert.equal(ended.status, 401, `the refresh was answered ${ended.status}`);
    });

    test("an organization's provider's refresh tokens live 12 hours in all; the server's own provider's a week unused", async () => {
      idp.setAccount("oli", { email: "oli@corp.example", email_verified: true });
      const started = Date.now();
      const viaCorp = await refreshed((await signIn("oli", corp)).refreshToken);
      const corpExpiry = Date.parse(viaCorp.refreshToken.expiry) - started;
      assert.ok(corpExpiry > 11.9 * HOUR && corpExpiry <= 12 * HOUR + 60_000, `an organization's: ${viaCorp.refreshToken.expiry}`);
      const viaServer = await refreshed((await signIn("oli")).refreshToken);
      const serverExpiry = Date.parse(viaServer.refreshToken.expiry) - started;
      assert.ok(serverExpiry > 7 * 24 * HOUR - 60_000, `the server's own: ${viaServer.refreshToken.expiry}`);
    });

    test("a provider that cannot be asked: 502 naming it, with Retry-After, nothing spent; the same refresh token works once it is back", async () => {
      idp.setAccount("uma", { email: "uma@corp.example", email_verified: true, groups: ["admins"] });
      const first = await signIn("uma", corp);
      idp.unavailable = true;
      try {
        const deferred = await refresh(first.refreshToken);
        assert.equal(deferred.status, 502, `the refresh was answered ${deferred.status} while the provider was down`);
        const status = (await deferred.json()) as { message: string; details: { reason?: string }[] };
        assert.ok(status.details.some((d) => d.reason === "IDENTITY_PROVIDER_UNREACHABLE"), JSON.stringify(status));
        assert.ok(Number(deferred.headers.get("retry-after")) > 0);
      } finally {
        idp.unavailable = false;
      }
      const pair = await refreshed(first.refreshToken);
      assert.ok(pair.token.token);
    });
  });
}
