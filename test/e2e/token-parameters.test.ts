import assert from "node:assert/strict";
import { after, describe, test } from "node:test";
import { decodeJwt, exportJWK, generateKeyPair, SignJWT, type CryptoKey } from "jose";
import { builtInRole } from "../../src/access/capabilities.js";
import { newChildUid } from "../../src/aip/uidp.js";
import { insertGroup } from "../../src/domains/iam/store/groups.js";
import { insertIdentity } from "../../src/domains/iam/store/identities.js";
import { bindRole } from "../../src/domains/iam/store/role-bindings.js";
import { testDatabases } from "../support/databases.js";
import { startOidcIssuer, type OidcIssuer } from "../support/oidc-issuer.js";
import { serveOverWires } from "../support/over-wires.js";

/**
 * The hosted service's token parameters (hosted-api.md, SecurityTokenService): `/sts/exchange` and
 * `/sts/exchange_refresh_token` answer GET and POST and take `aud` (the API's or the registry's
 * URL, repeatable), `cap` and `scope`/`scopes`, which narrow the token (never widen it); anything
 * else is INVALID_ARGUMENT naming it. And the hosted pull-token model: a static-keys identity's
 * JWT used as the password at the registry's `/token` is accepted with the same scope checks as
 * our `pap_` passwords. Over REST, the registry's wire and Connect, on SQLite and PostgreSQL.
 */

const STATIC_ISSUER = "https://keys.example";

interface Answer {
  status: number;
  body: Record<string, unknown> & { details?: Array<{ "@type": string; fieldViolations?: Array<{ field: string }> }> };
}

/** The server-wide login provider whose ID tokens a person exchanges (a real issuer on loopback). */
const issuer: OidcIssuer = await startOidcIssuer();
after(() => issuer.close());

for (const database of await testDatabases()) {
  describe(`token parameters (${database.name})`, { skip: database.skip }, () => {
    let privateKey: CryptoKey;
    let folder: string;
    let identity: string;
    const served = serveOverWires({
      database,
      logLevel: "silent",
      apiUrl: "listen",
      upstreamIssuers: { allowHttp: true, allowPrivateAddresses: true },
      login: { issuer: issuer.url, clientId: "platform" },
      async prepare(server) {
        const pair = await generateKeyPair("ES256", { extractable: true });
        privateKey = pair.privateKey;
        const jwk = { ...(await exportJWK(pair.publicKey)), kid: "deploy-1", alg: "ES256" };
        const now = Date.now();
        folder = newChildUid(server.org.uid);
        await insertGroup(server.store.db, { uid: folder, parent_uid: server.org.uid, name: "team", description: "", create_time: now, update_time: now });
        identity = newChildUid(server.org.uid);
        const staticKeys = { issuer: STATIC_ISSUER, subject: "deployer", issuerKeys: { keys: [jwk] } };
        await insertIdentity(server.store.db, { uid: identity, group_uid: server.org.uid, name: "deployer", description: "", claim_match: "", static_keys: JSON.stringify(staticKeys), last_seen_time: null, create_time: now, update_time: now });
        // Owner on the whole organization: every narrowing below is of a token that could do more.
        await bindRole(server.store.db, server.org.uid, identity, builtInRole("owner").uid, now);
        const repo = await fetch(`${server.apiUrl}/registry/v2/repos/${server.org.uid}`, {
          method: "POST",
          headers: { authorization: `Bearer ${server.ownerToken}`, "content-type": "application/json" },
          body: JSON.stringify({ name: "app" }),
        });
        assert.equal(repo.status, 200, await repo.text());
      },
    });
    const server = () => served.server();
    const signed = (claims: Record<string, unknown> = {}) =>
      new SignJWT({ sub: "deployer", ...claims }).setProtectedHeader({ alg: "ES256", kid: "deploy-1" }).setIssuer(STATIC_ISSUER).setIssuedAt().setExpirationTime("10m").sign(privateKey);

    async function exchange(params: string, method: "GET" | "POST" = "GET", bearer?: string): Promise<Answer> {
      const res = await fetch(`${server().apiUrl}/sts/exchange?${params}`, { method, headers: { authorization: `Bearer ${bearer ?? (await signed())}` } });
      return { status: res.status, body: (await res.json()) as Answer["body"] };
    }
    const api = async (token: string, method: string, path: string, body?: unknown) => {
      const res = await fetch(`${server().apiUrl}${path}`, { method, headers: { authorization: `Bearer ${token}`, ...(body ? { "content-type": "application/json" } : {}) }, body: body ? JSON.stringify(body) : undefined });
      await res.arrayBuffer();
      return res.status;
    };
    const connectGetGroup = async (token: string, uid: string) => {
      const res = await fetch(`${server().apiUrl}/platform.iam.v2.GroupsService/GetGroup`, { method: "POST", headers: { authorization: `Bearer ${token}`, "content-type": "application/json" }, body: JSON.stringify({ uid }) });
      await res.arrayBuffer();
      return res.status;
    };
    const invalid = (answer: Answer) => {
      assert.equal(answer.status, 400, JSON.stringify(answer.body));
      assert.equal(answer.body.code, 3);
      return answer.body.details?.find((d) => d["@type"].endsWith("BadRequest"))?.fieldViolations?.map((v) => v.field);
    };

    test("/sts/exchange answers GET as POST; an unnarrowed token does what its identity may", async () => {
      for (const method of ["GET", "POST"] as const) {
        const out = await exchange(`identity=${identity}`, method);
        assert.equal(out.status, 200, JSON.stringify(out.body));
        const token = out.body.token as string;
        assert.equal(await api(token, "GET", `/iam/v2/groups/${server().org.uid}`), 200);
        assert.equal(await api(token, "POST", `/iam/v2/groups/${folder}`, { name: `made by ${method.toLowerCase()}` }), 200);
      }
    });

    test("cap narrows the token to those capabilities, on REST and Connect", async () => {
      const out = await exchange(`identity=${identity}&cap=CAP_IAM_GROUPS_LIST&cap=registry.pull`);
      assert.equal(out.status, 200, JSON.stringify(out.body));
      const token = out.body.token as string;
      assert.deepEqual(decodeJwt(token).caps, ["CAP_IAM_GROUPS_LIST", "CAP_REGISTRY_PULL"]);
      assert.equal(await api(token, "GET", `/iam/v2/groups/${server().org.uid}`), 200);
      assert.equal(await connectGetGroup(token, server().org.uid), 200);
      assert.equal(await api(token, "POST", `/iam/v2/groups/${folder}`, { name: "refused" }), 403, "creating a group needs a capability the token was not given");
    });

    test("scopes (and the deprecated scope) narrow the token to those groups' subtrees", async () => {
      for (const param of ["scopes", "scope"]) {
        const out = await exchange(`identity=${identity}&${param}=${folder}`);
        assert.equal(out.status, 200, JSON.stringify(out.body));
        const token = out.body.token as string;
        assert.equal(await api(token, "GET", `/iam/v2/groups/${folder}`), 200);
        assert.equal(await connectGetGroup(token, folder), 200);
        assert.equal(await api(token, "GET", `/iam/v2/groups/${server().org.uid}`), 403, "the organization is outside the scope");
        assert.equal(await connectGetGroup(token, server().org.uid), 403);
      }
    });

    test("aud chooses the registry: the token is refused by the API and accepted at the registry's /token, narrowed there too", async () => {
      const registryUrl = "http://registry.test";
      const out = await exchange(`identity=${identity}&aud=${encodeURIComponent(registryUrl)}&cap=CAP_REGISTRY_PULL`);
      assert.equal(out.status, 200, JSON.stringify(out.body));
      const token = out.body.token as string;
      assert.equal(decodeJwt(token).aud, registryUrl);
      assert.equal(await api(token, "GET", `/iam/v2/groups/${server().org.uid}`), 401);
      const pull = await fetch(`${server().registryUrl}/token?scope=${encodeURIComponent("repository:acme/app:pull,push")}`, { headers: { authorization: `Bearer ${token}` } });
      const granted = (await pull.json()) as { token: string };
      assert.equal(pull.status, 200);
      assert.deepEqual(decodeJwt(granted.token).access, [{ type: "repository", name: "acme/app", actions: ["pull"] }], "push was not in the token's capabilities");
    });

    test("any other parameter, an unknown capability, a bad scope or audience is INVALID_ARGUMENT naming it", async () => {
      assert.deepEqual(invalid(await exchange(`identity=${identity}&colour=red`)), ["colour"]);
      assert.deepEqual(invalid(await exchange(`identity=${identity}&cap=CAP_NO_SUCH`)), ["cap"]);
      assert.deepEqual(invalid(await exchange(`identity=${identity}&scopes=not-a-uid`)), ["scopes"]);
      assert.deepEqual(invalid(await exchange(`identity=${identity}&aud=https://elsewhere.example`)), ["aud"]);
    });

    test("/sts/exchange_refresh_token takes the same parameters: a person gets a registry-audience token from a refresh", async () => {
      // A person of the server-wide provider exchanges its ID token for a token and a refresh token.
      const idToken = await issuer.issue({ sub: "ada", aud: "platform", email: "ada@example.com", email_verified: true });
      const first = await exchange("", "POST", idToken);
      assert.equal(first.status, 200, JSON.stringify(first.body));
      const refreshToken = first.body.refreshToken as string;
      const refresh = async (params: string, token: string, method: "GET" | "POST" = "POST") => {
        const res = await fetch(`${server().apiUrl}/sts/exchange_refresh_token?${params}`, { method, headers: { authorization: `Bearer ${token}` } });
        return { status: res.status, body: (await res.json()) as Answer["body"] };
      };
      assert.deepEqual(invalid(await refresh("colour=red", refreshToken)), ["colour"], "an unknown parameter is refused before anything is spent");
      const pair = await refresh(`aud=${encodeURIComponent("http://registry.test")}&cap=CAP_REGISTRY_PULL`, refreshToken, "GET");
      assert.equal(pair.status, 200, JSON.stringify(pair.body));
      const access = (pair.body.token as { token: string }).token;
      assert.equal(decodeJwt(access).aud, "http://registry.test");
      assert.deepEqual(decodeJwt(access).caps, ["CAP_REGISTRY_PULL"]);
    });

    test("the hosted pull-token model: a static-keys identity's JWT as the password at /token, scopes checked as for ours", async () => {
      const basic = (password: string) => `Basic ${Buffer.from(`${identity}:${password}`).toString("base64")}`;
      const ask = (scope: string, password: string) => fetch(`${server().registryUrl}/token?scope=${encodeURIComponent(scope)}`, { headers: { authorization: basic(password) } });
      const ok = await ask("repository:acme/app:pull,push", await signed());
      assert.equal(ok.status, 200);
      const granted = decodeJwt(((await ok.json()) as { token: string }).token);
      assert.deepEqual(granted.access, [{ type: "repository", name: "acme/app", actions: ["pull", "push"] }]);
      assert.equal(granted.sub, identity);
      // A JWT of another key, another subject, or expired is refused as a wrong password is.
      const other = await generateKeyPair("ES256");
      const forged = await new SignJWT({ sub: "deployer" }).setProtectedHeader({ alg: "ES256", kid: "deploy-1" }).setIssuer(STATIC_ISSUER).setIssuedAt().setExpirationTime("10m").sign(other.privateKey);
      const expired = await new SignJWT({ sub: "deployer" }).setProtectedHeader({ alg: "ES256", kid: "deploy-1" }).setIssuer(STATIC_ISSUER).setIssuedAt(Math.floor(Date.now() / 1000) - 3600).setExpirationTime(Math.floor(Date.now() / 1000) - 1800).sign(privateKey);
      for (const password of [forged, expired, await signed({ sub: "someone else" })]) assert.equal((await ask("repository:acme/app:pull", password)).status, 401);
    });
  });
}
