// An identity provider's client secret is write-only and sealed at rest; a public client
// (pkce_enabled) needs none. Over REST, against a real server.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { builtInRole } from "../../src/access/capabilities.js";
import { startTestServer, type TestServer } from "../support/test-server.js";

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- JSON answers read loosely
type Json = Record<string, any>;

let server: TestServer;
before(async () => {
  server = await startTestServer();
});
after(() => server.close());

async function rest(method: string, path: string, body?: unknown): Promise<{ status: number; body: Json }> {
  const res = await fetch(`${server.apiUrl}${path}`, {
    method,
    headers: { authorization: `Bearer ${server.ownerToken}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as Json };
}

const storedSecret = async (uid: string) =>
  (await server.store.db.selectFrom("identity_providers").select("client_secret").where("uid", "=", uid).executeTakeFirstOrThrow()).client_secret;

const provider = (oidc: Record<string, unknown>) => ({ name: `corp-${Math.random().toString(16).slice(2, 8)}`, defaultRole: builtInRole("viewer").uid, oidc: { issuer: "https://login.example.com", clientId: "cid", ...oidc } });

test("the client secret is sealed in the database and never answered", async () => {
  const made = await rest("POST", `/iam/v2/identityProviders/${server.org.uid}`, provider({ clientSecret: "first-secret" }));
  assert.equal(made.status, 200, JSON.stringify(made.body));
  assert.ok(!made.body.oidc.clientSecret, "not answered");
  const sealed = await storedSecret(made.body.uid);
  assert.match(sealed, /^sealed:v1:/);
  assert.ok(!sealed.includes("first-secret"));

  // An update without a secret keeps the sealed one; with one, seals the new one.
  const renamed = await rest("PATCH", `/iam/v2/identityProviders/${made.body.uid}?updateMask=description`, { description: "renamed" });
  assert.equal(renamed.status, 200, JSON.stringify(renamed.body));
  assert.equal(await storedSecret(made.body.uid), sealed);
  const rotated = await rest("PATCH", `/iam/v2/identityProviders/${made.body.uid}?updateMask=oidc.clientSecret`, { oidc: { clientSecret: "second-secret" } });
  assert.equal(rotated.status, 200, JSON.stringify(rotated.body));
  const resealed = await storedSecret(made.body.uid);
  assert.notEqual(resealed, sealed);
  assert.ok(!resealed.includes("second-secret"));
  const read = await rest("GET", `/iam/v2/identityProviders/${made.body.uid}`);
  assert.ok(!read.body.oidc.clientSecret, "not answered");
});

test("a public client (pkce_enabled) needs no secret; a confidential one does, and clearing it needs pkce_enabled", async () => {
  const missing = await rest("POST", `/iam/v2/identityProviders/${server.org.uid}`, provider({}));
  assert.equal(missing.status, 400);
  assert.deepEqual((missing.body.details as Json[]).find((d) => String(d["@type"]).endsWith("BadRequest"))?.fieldViolations.map((v: Json) => v.field), ["identity_provider.oidc.client_secret"]);

  const open = await rest("POST", `/iam/v2/identityProviders/${server.org.uid}`, provider({ pkceEnabled: true }));
  assert.equal(open.status, 200, JSON.stringify(open.body));
  assert.equal(open.body.oidc.pkceEnabled, true);
  assert.equal(await storedSecret(open.body.uid), "");

  const confidential = await rest("POST", `/iam/v2/identityProviders/${server.org.uid}`, provider({ clientSecret: "s" }));
  const cleared = await rest("PATCH", `/iam/v2/identityProviders/${confidential.body.uid}?updateMask=oidc.clientSecret`, { oidc: { clientSecret: "" } });
  assert.equal(cleared.status, 400, "a confidential client cannot lose its secret");
  const madePublic = await rest("PATCH", `/iam/v2/identityProviders/${confidential.body.uid}?updateMask=oidc.clientSecret,oidc.pkceEnabled`, { oidc: { clientSecret: "", pkceEnabled: true } });
  assert.equal(madePublic.status, 200, JSON.stringify(madePublic.body));
  assert.equal(await storedSecret(confidential.body.uid), "");
});
