import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { promisify } from "node:util";
import { IdentitiesService } from "../../gen/platform/iam/v2/identities_service_pb.js";
import { PullTokensService } from "../../gen/platform/iam/v2/pull_tokens_service_pb.js";
import { newChildUid } from "../../src/aip/uidp.js";
import { builtInRole } from "../../src/access/capabilities.js";
import { bindRole, insertIdentity } from "../../src/domains/iam/index.js";
import { writeLayout, type BuiltLayout } from "../support/oci-layout.js";
import { freePort, skopeoSkip } from "../support/skopeo.js";
import { startTestServer, type TestServer } from "../support/test-server.js";
import { allWires, methodOf, type Wire } from "../support/wires.js";
import { BIN } from "../support/repo.js";

/**
 * Pull tokens: made over every wire of the API (CreatePullToken), used by a registry client no
 * one here wrote (skopeo) with Basic credentials, refused once revoked (the identity deleted, even
 * a registry token already issued) or expired, and never able to push.
 */

const run = promisify(execFile);
const dir = mkdtempSync(join(tmpdir(), "platform-api-pull-tokens-"));
const HOUR_S = 3600;

interface Credentials {
  username: string;
  password: string;
  expireTime: string;
  roleBindingUid: string;
  identity: { uid: string; name: string; pullToken?: { expireTime: string } };
}

describe("pull tokens", () => {
  let server: TestServer;
  let wires: Wire[];
  let host: string;
  let image: BuiltLayout;
  const create = methodOf(PullTokensService, "CreatePullToken");

  /** An identity of the organization bound to `role` there, and its API token. */
  async function member(role: "viewer" | "editor" | "registry.pull_token_creator"): Promise<string> {
    const uid = newChildUid(server.org.uid);
    const now = Date.now();
    await insertIdentity(server.store.db, { uid, group_uid: server.org.uid, name: `a ${role.replace(/[^a-z]/g, " ")}`, description: "", claim_match: "", static_keys: "", last_seen_time: null, create_time: now, update_time: now });
    await bindRole(server.store.db, server.org.uid, uid, builtInRole(role).uid, now);
    return (await server.server.tokens.issue({ subject: uid, audience: server.apiUrl })).token;
  }

  const createOver = (wire: Wire, request: Record<string, string>, token = server.ownerToken) =>
    wire.call(create, { parent: server.org.uid, ...request }, { method: "POST", path: `/iam/v2/pullTokens/${server.org.uid}`, body: request }, token);

  async function makeToken(request: Record<string, string> = {}): Promise<Credentials> {
    const out = await createOver(wires[3], request);
    assert.equal(out.code, 0, out.message);
    return out.body as unknown as Credentials;
  }

  const skopeo = (...args: string[]) => run("skopeo", ["--insecure-policy", ...args], { timeout: 60_000, env: { ...process.env, HOME: dir } });
  const pullWith = (creds: string, tag = "v1") => skopeo("copy", "--src-tls-verify=false", "--src-creds", creds, `docker://${host}/acme/app:${tag}`, `oci:${join(dir, `out-${Math.random().toString(16).slice(2)}`)}:${tag}`);
  const refused = async (work: Promise<unknown>, pattern: RegExp) => {
    const failure = await work.then(
      () => undefined,
      (error: Error & { stderr?: string }) => `${error.message}\n${error.stderr ?? ""}`,
    );
    assert.ok(failure !== undefined, "the registry refused");
    assert.match(failure, pattern);
  };

  /** A registry token for `repository:acme/app:pull` from `/token` with Basic credentials. */
  async function tokenFor(username: string, password: string): Promise<Response> {
    return fetch(`${server.registryUrl}/token?scope=repository:acme/app:pull&service=x`, { headers: { authorization: `Basic ${Buffer.from(`${username}:${password}`).toString("base64")}` } });
  }

  before(async () => {
    const port = await freePort();
    host = `127.0.0.1:${port}`;
    server = await startTestServer({ registryUrl: `http://${host}`, registryPort: port, apiUrl: "listen" });
    wires = allWires(server.apiPort);
    image = writeLayout(join(dir, "image"), { architectures: ["amd64"], ref: "v1", layerBytes: [20_000] });
  });
  after(async () => {
    for (const wire of wires ?? []) wire.close();
    await server?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  test("CreatePullToken over every wire: an identity bound to registry.pull, its password shown once", async () => {
    const before = Date.now();
    for (const wire of wires) {
      const out = await createOver(wire, { name: `ci ${wire.name}` });
      assert.equal(out.code, 0, `${wire.name}: ${out.message}`);
      const made = out.body as unknown as Credentials;
      assert.equal(made.username, made.identity.uid, wire.name);
      assert.ok(made.identity.uid.startsWith(`${server.org.uid}/`), wire.name);
      assert.match(made.password, /^pap_[A-Za-z0-9_-]{43}$/, wire.name);
      const expiry = Date.parse(made.expireTime);
      assert.ok(Math.abs(expiry - (before + 720 * HOUR_S * 1000)) < 60_000, `${wire.name}: 720 hours by default`);
      assert.equal(made.identity.pullToken?.expireTime, made.expireTime, wire.name);

      const listed = await fetch(`${server.apiUrl}/iam/v2/identities/${made.identity.uid}`, { headers: { authorization: `Bearer ${server.ownerToken}` } });
      const shown = await listed.text();
      assert.equal(listed.status, 200, shown);
      assert.ok(!shown.includes(made.password), "the password is never shown again");
      assert.equal((JSON.parse(shown) as Credentials["identity"]).pullToken?.expireTime, made.expireTime);
      const binding = (await (await fetch(`${server.apiUrl}/iam/v2/roleBindings/${made.roleBindingUid}`, { headers: { authorization: `Bearer ${server.ownerToken}` } })).json()) as { role?: { name: string } };
      assert.equal(binding.role?.name, "registry.pull", wire.name);
    }
    const events = await server.store.db.selectFrom("events").select(["type", "body"]).where("type", "like", "%pull_token.created%").execute();
    assert.equal(events.length, 4, "one event per token");
    for (const event of events) assert.ok(!String(event.body).includes("pap_"), "no event carries a password");
  });

  test("refusals: a lifetime out of bounds, a caller without the capability, a role beyond the caller's, a pull token made by hand", async () => {
    const viewer = await member("viewer");
    const creator = await member("registry.pull_token_creator");
    for (const wire of wires) {
      const long = await createOver(wire, { ttl: `${8761 * HOUR_S}s` });
      assert.equal(long.code, 3, `${wire.name}: INVALID_ARGUMENT`);
      assert.match(JSON.stringify(long.details), /"field":"ttl"/, wire.name);
      assert.equal((await createOver(wire, { ttl: "59s" })).code, 3, `${wire.name}: under a minute is INVALID_ARGUMENT`);
      assert.equal((await createOver(wire, { roleUid: `${server.org.uid}/0123456789abcdef` })).code, 5, `${wire.name}: an unknown role is NOT_FOUND`);
      assert.equal((await createOver(wire, {}, viewer)).code, 7, `${wire.name}: a viewer may not`);
      assert.equal((await createOver(wire, {}, creator)).code, 0, `${wire.name}: the pull token creator role may`);
      const owner = await createOver(wire, { roleUid: builtInRole("owner").uid }, creator);
      assert.equal(owner.code, 7, `${wire.name}: binding owner needs owner's capabilities`);
      const byHand = await wire.call(
        methodOf(IdentitiesService, "CreateIdentity"),
        { parent: server.org.uid, identity: { name: "forged", pullToken: {} } },
        { method: "POST", path: `/iam/v2/identities/${server.org.uid}`, body: { name: "forged", pullToken: {} } },
        server.ownerToken,
      );
      assert.equal(byHand.code, 3, `${wire.name}: ${byHand.message}`);
      assert.match(JSON.stringify(byHand.details), /identity\.pull_token/, wire.name);
    }
    const made = await makeToken();
    const patched = await fetch(`${server.apiUrl}/iam/v2/identities/${made.identity.uid}?update_mask=claim_match`, {
      method: "PATCH",
      headers: { authorization: `Bearer ${server.ownerToken}`, "content-type": "application/json" },
      body: JSON.stringify({ claimMatch: { issuer: "https://ci.example.com", subject: "x" } }),
    });
    assert.equal(patched.status, 400, "a pull token stays one");
  });

  test("skopeo pulls with a pull token; it cannot push; a wrong password, a revoked or an expired token is refused", { skip: skopeoSkip, timeout: 120_000 }, async () => {
    const platform = await server.server.tokens.issue({ subject: server.ownerUid, audience: server.registryUrl });
    await skopeo("copy", "--dest-tls-verify=false", "--dest-creds", `_token:${platform.token}`, `oci:${image.dir}:v1`, `docker://${host}/acme/app:v1`);

    const made = await makeToken({ ttl: `${2 * HOUR_S}s` });
    const creds = `${made.username}:${made.password}`;
    await pullWith(creds);
    const seen = (await (await fetch(`${server.apiUrl}/iam/v2/identities/${made.identity.uid}`, { headers: { authorization: `Bearer ${server.ownerToken}` } })).json()) as { lastSeenTime?: string };
    assert.ok(seen.lastSeenTime !== undefined, "its use shows as last seen");
    await refused(skopeo("copy", "--dest-tls-verify=false", "--dest-creds", creds, `oci:${image.dir}:v1`, `docker://${host}/acme/app:v2`), /denied|unauthorized|403/i);
    await refused(pullWith(`${made.username}:pap_${"A".repeat(43)}`), /unauthorized|401|invalid/i);

    // A registry token from /token lives only as long as its pull token, at most the usual five minutes.
    const answer = await tokenFor(made.username, made.password);
    assert.equal(answer.status, 200);
    const { token, expires_in } = (await answer.json()) as { token: string; expires_in: number };
    assert.equal(expires_in, 300);
    const manifest = () => fetch(`${server.registryUrl}/v2/acme/app/manifests/v1`, { headers: { authorization: `Bearer ${token}`, accept: "application/vnd.oci.image.index.v1+json, application/vnd.oci.image.manifest.v1+json" } });
    assert.equal((await manifest()).status, 200);

    // Deleting the identity revokes it at once: new logins and the registry token already issued.
    const deleted = await fetch(`${server.apiUrl}/iam/v2/identities/${made.identity.uid}`, { method: "DELETE", headers: { authorization: `Bearer ${server.ownerToken}` } });
    assert.equal(deleted.status, 200);
    assert.equal((await manifest()).status, 401, "the registry token died with its pull token");
    assert.equal((await tokenFor(made.username, made.password)).status, 401);
    await refused(pullWith(creds), /unauthorized|401|invalid/i);

    // Expiry: a token whose time has come is refused (its expiry set in the past, as time would).
    const expiring = await makeToken();
    await pullWith(`${expiring.username}:${expiring.password}`);
    await server.store.db.updateTable("identities").set({ pull_token_expire_time: Date.now() - 1 }).where("uid", "=", expiring.identity.uid).execute();
    assert.equal((await tokenFor(expiring.username, expiring.password)).status, 401);
    await refused(pullWith(`${expiring.username}:${expiring.password}`), /unauthorized|401|invalid/i);
  });

  test("the CLI creates one as the signed-in person and prints the credentials once", async () => {
    const config = join(dir, "config");
    mkdirSync(join(config, "platform-api"), { recursive: true, mode: 0o700 });
    const session = { token: server.ownerToken, expiry: new Date(Date.now() + HOUR_S * 1000).toISOString(), refreshToken: "unused" };
    writeFileSync(join(config, "platform-api", "credentials.json"), JSON.stringify({ current: server.apiUrl, sessions: { [server.apiUrl]: session } }), { mode: 0o600 });
    const cli = (...args: string[]) => run(process.execPath, [BIN, ...args], { env: { ...process.env, XDG_CONFIG_HOME: config }, timeout: 30_000 });
    const { stdout, stderr } = await cli("pull-token", "create", "--group", server.org.uid, "--ttl", "48h", "--name", "cluster pulls");
    const made = JSON.parse(stdout) as Credentials;
    assert.match(made.password, /^pap_/);
    assert.equal(made.identity.name, "cluster pulls");
    assert.ok(Math.abs(Date.parse(made.expireTime) - (Date.now() + 48 * HOUR_S * 1000)) < 60_000);
    assert.match(stderr, new RegExp(`docker login .*--username '${made.username}'`));
    assert.equal((await tokenFor(made.username, made.password)).status, 200, "the registry accepts what the CLI printed");

    const failure = await cli("pull-token", "create", "--group", server.org.uid, "--ttl", "9000h").then(
      () => "",
      (error: { stderr: string; code: number }) => `${error.code} ${error.stderr}`,
    );
    assert.match(failure, /ttl/, "the API's refusal, said");
    const usage = await cli("pull-token", "create").then(
      () => "",
      (error: { stderr: string }) => error.stderr,
    );
    assert.match(usage, /--group/);
  });
});
