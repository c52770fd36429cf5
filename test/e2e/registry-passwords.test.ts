import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { createHash } from "node:crypto";
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { promisify } from "node:util";
import { builtInRole } from "../../src/access/capabilities.js";
import { dropFresh, testDatabases } from "../support/databases.js";
import { writeLayout, type BuiltLayout } from "../support/oci-layout.js";
import { BIN, inRepo } from "../support/repo.js";
import { freePort, skopeoSkip } from "../support/skopeo.js";
import { startTestIdp, type TestIdp } from "../support/test-idp.js";
import { startTestServer, type TestServer } from "../support/test-server.js";

/**
 * A person's own registry passwords over the real wire: a person signed in with the CLI (a real
 * OpenID Provider, a browser played by a script) makes one with `auth registry-password create`,
 * the registry host's `/token` takes it as Basic credentials for what the person may pull and push
 * (nothing more), skopeo pushes and pulls with it (`--creds`), `revoke` ends it at once, the store
 * keeps no usable secret, and creation and revocation are lines of the audit log.
 */

const exec = promisify(execFile);
const WALKER = inRepo("test/support/login-walk-browser.ts");
const TSX = createRequire(import.meta.url).resolve("tsx");
const dir = mkdtempSync(join(tmpdir(), "platform-api-registry-passwords-"));
after(() => rmSync(dir, { recursive: true, force: true }));

const browser = join(dir, "browser.sh");
writeFileSync(browser, `#!/bin/sh\nexec "${process.execPath}" --import "${TSX}" "${WALKER}" "$1" >>"${join(dir, "browser.log")}" 2>&1\n`);
chmodSync(browser, 0o755);

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

interface Listed {
  id: string;
  username: string;
  description: string;
  createTime: string;
  expireTime?: string;
  lastUsedTime?: string;
  password?: string;
}

const PASSWORD = /^prp_([0-9a-f]{16})_([A-Za-z0-9_-]{43})$/;
const basic = (username: string, password: string) => `Basic ${Buffer.from(`${username}:${password}`).toString("base64")}`;

for (const database of await testDatabases()) {
  describe(`a person's registry passwords on ${database.name}`, { skip: database.skip, timeout: 180_000 }, () => {
    let idp: TestIdp;
    let server: TestServer;
    let dbUrl: string;
    let api: string;
    let host: string;
    let image: BuiltLayout;
    let personUid = "";
    const config = join(dir, `config-${database.name}`);
    const home = join(dir, `home-${database.name}`);
    const auditLog = join(dir, `audit-${database.name}.log`);
    const env = { XDG_CONFIG_HOME: config, HOME: home, BROWSER: browser };

    function cli(args: string[]): Promise<Run> {
      return new Promise((resolve) => {
        execFile(process.execPath, [BIN, ...args], { encoding: "utf8", timeout: 60_000, env: { ...process.env, PLATFORM_API_URL: "", ...env } }, (error, stdout, stderr) =>
          resolve({ code: error ? Number((error as { code?: number }).code ?? 1) : 0, stdout, stderr }),
        );
      });
    }
    const ok = (run: Run): Run => (assert.equal(run.code, 0, `exit ${run.code}: ${run.stderr}${run.stdout}`), run);
    const sessionToken = () => (JSON.parse(readFileSync(join(config, "platform-api", "credentials.json"), "utf8")) as { sessions: Record<string, { token: string }> }).sessions[api].token;

    const skopeo = (...args: string[]) => exec("skopeo", ["--insecure-policy", ...args], { timeout: 60_000, env: { ...process.env, HOME: home } });
    const outDir = () => `oci:${join(dir, `out-${Math.random().toString(16).slice(2)}`)}:v1`;
    const refused = async (work: Promise<unknown>, pattern: RegExp) => {
      const failure = await work.then(
        () => undefined,
        (error: Error & { stderr?: string }) => `${error.message}\n${error.stderr ?? ""}`,
      );
      assert.ok(failure !== undefined, "the registry refused");
      assert.match(failure, pattern);
    };
    const tokenWith = (authorization: string, scope = "repository:acme/app:pull,push") =>
      fetch(`${server.registryUrl}/token?service=x&scope=${encodeURIComponent(scope)}`, { headers: { authorization } });
    const accessOf = (token: string) => (JSON.parse(Buffer.from(token.split(".")[1], "base64url").toString("utf8")) as { sub: string; access: { name: string; actions: string[] }[]; exp: number; iat: number });
    const auditLines = () =>
      readFileSync(auditLog, "utf8")
        .split("\n")
        .filter((l) => l !== "")
        .map((l) => JSON.parse(l) as { action: string; resource: string; outcome: string; actor: { subject: string }; host: string });

    before(async () => {
      mkdirSync(home, { recursive: true });
      dbUrl = await database.fresh();
      const port = await freePort();
      host = `127.0.0.1:${port}`;
      idp = await startTestIdp();
      server = await startTestServer({
        apiUrl: "listen",
        dbUrl,
        registryUrl: `http://${host}`,
        registryPort: port,
        auditLog,
        login: { issuer: idp.issuer, clientId: "platform", clientSecret: "s3cret" },
        upstreamIssuers: { allowHttp: true, allowPrivateAddresses: true },
      });
      api = server.apiUrl;
      await idp.addClient({ client_id: "platform", client_secret: "s3cret", redirect_uris: [`${api}/auth/v1/callback`], token_endpoint_auth_method: "client_secret_post" });
      idp.setAccount("ada", { email: "ada@example.com", email_verified: true, name: "Ada" });
      image = writeLayout(join(dir, `image-${database.name}`), { architectures: ["amd64"], ref: "v1", layerBytes: [20_000] });
      // Ada signs in and joins the organization as an editor (she may pull and push, and delete tags).
      ok(await cli(["login", "--api-url", api, "--timeout", "30s"]));
      const made = await fetch(`${api}/iam/v2/groupInvites/${server.org.uid}`, {
        method: "POST",
        headers: { authorization: `Bearer ${server.ownerToken}`, "content-type": "application/json" },
        body: JSON.stringify({ roleUid: builtInRole("editor").uid, ttl: "3600s" }),
      });
      const invite = (await made.json()) as { code: string };
      assert.equal(made.status, 200, JSON.stringify(invite));
      personUid = (JSON.parse(ok(await cli(["invite", "accept", "--", invite.code])).stdout) as { identity: string }).identity;
    });
    after(async () => {
      await server?.close();
      await idp?.close();
      if (dbUrl) await dropFresh(dbUrl);
    });

    let made: { username: string; password: string; id: string; expireTime: string | null };

    test("create: the username is the person's identity, the password shown once; list shows it without the secret", async () => {
      const run = ok(await cli(["auth", "registry-password", "create", "--ttl", "24h", "--description", "laptop docker"]));
      made = JSON.parse(run.stdout) as typeof made;
      assert.deepEqual(Object.keys(made), ["username", "password", "id", "expireTime"]);
      assert.equal(made.username, personUid);
      assert.equal(PASSWORD.exec(made.password)?.[1], made.id);
      assert.ok(Math.abs(Date.parse(made.expireTime!) - (Date.now() + 24 * 3_600_000)) < 60_000, made.expireTime!);
      assert.match(run.stderr, /docker login <registry host> --username '.+' --password-stdin/);
      const listed = JSON.parse(ok(await cli(["auth", "registry-password", "list"])).stdout) as { registryPasswords: Listed[] };
      assert.deepEqual(
        listed.registryPasswords.map((p) => [p.id, p.username, p.description, p.expireTime, p.password]),
        [[made.id, personUid, "laptop docker", made.expireTime, undefined]],
      );
      assert.ok(!JSON.stringify(listed).includes(PASSWORD.exec(made.password)![2]), "no secret is listed");
    });

    test("the stored row holds no usable secret: a salted HMAC, not the secret nor its plain SHA-256", async () => {
      const secret = PASSWORD.exec(made.password)![2];
      const rows = await server.store.db.selectFrom("registry_passwords").selectAll().execute();
      assert.equal(rows.length, 1);
      const stored = JSON.stringify(rows);
      for (const leak of [made.password, secret, createHash("sha256").update(secret).digest("hex"), createHash("sha256").update(made.password).digest("hex")]) {
        assert.ok(!stored.includes(leak), `the row holds no ${leak.slice(0, 8)}...`);
      }
      assert.match(rows[0].secret_hash, /^[0-9a-f]{64}$/);
      assert.match(rows[0].salt, /^[0-9a-f]{32}$/);
    });

    test("/token with Basic username:password: a registry token of the person for pull and push, never delete; a wrong username or secret is 401", async () => {
      const answer = await tokenWith(basic(made.username, made.password));
      const body = (await answer.json()) as { token: string; expires_in: number };
      assert.equal(answer.status, 200, JSON.stringify(body));
      const claims = accessOf(body.token);
      assert.equal(claims.sub, personUid);
      assert.deepEqual(claims.access[0], { type: "repository", name: "acme/app", actions: ["pull", "push"] });
      assert.ok(body.expires_in <= 300);
      const deleting = await tokenWith(basic(made.username, made.password), "repository:acme/app:delete");
      const denied = await deleting.text();
      assert.equal(deleting.status, 403, `an editor's password may not delete: ${denied}`);
      const asOwner = await tokenWith(basic(server.ownerUid, made.password));
      await asOwner.body?.cancel();
      assert.equal(asOwner.status, 401, "another identity's username is refused");
      const tampered = made.password.slice(0, -2) + (made.password.endsWith("AA") ? "BB" : "AA");
      const wrong = await tokenWith(basic(made.username, tampered));
      assert.equal(wrong.status, 401);
      assert.match(await wrong.text(), /registry password is unknown, revoked or expired/);
    });

    test("skopeo pushes and pulls with --creds", { skip: skopeoSkip }, async () => {
      const creds = `${made.username}:${made.password}`;
      await skopeo("copy", "--dest-tls-verify=false", "--dest-creds", creds, `oci:${image.dir}:v1`, `docker://${host}/acme/app:v1`);
      await skopeo("copy", "--src-tls-verify=false", "--src-creds", creds, `docker://${host}/acme/app:v1`, outDir());
      const inspected = JSON.parse((await skopeo("inspect", "--tls-verify=false", "--creds", creds, `docker://${host}/acme/app:v1`)).stdout) as { Digest: string };
      assert.match(inspected.Digest, /^sha256:/);
      const listed = JSON.parse(ok(await cli(["auth", "registry-password", "list"])).stdout) as { registryPasswords: Listed[] };
      assert.ok(listed.registryPasswords[0].lastUsedTime, "its last use is shown");
    });

    test("the API: only the signed-in person's own passwords, with a person's token; refusals", async () => {
      const noToken = await fetch(`${api}/auth/v1/registryPasswords`);
      await noToken.body?.cancel();
      assert.equal(noToken.status, 401);
      const owner = await fetch(`${api}/auth/v1/registryPasswords`, { method: "POST", headers: { authorization: `Bearer ${server.ownerToken}` } });
      assert.equal(owner.status, 403, "the bootstrap owner is not a person signed in");
      assert.match(((await owner.json()) as { message: string }).message, /only a person signed in/);
      const person = { authorization: `Bearer ${sessionToken()}`, "content-type": "application/json" };
      const badTtl = await fetch(`${api}/auth/v1/registryPasswords`, { method: "POST", headers: person, body: JSON.stringify({ ttl: "59s" }) });
      await badTtl.body?.cancel();
      assert.equal(badTtl.status, 400);
      const unknown = await fetch(`${api}/auth/v1/registryPasswords/0123456789abcdef`, { method: "DELETE", headers: person });
      await unknown.body?.cancel();
      assert.equal(unknown.status, 404);
      // At most 10 live at once: a password with no expiry, then up to the bound, then 429.
      const made2: string[] = [];
      for (let i = 0; i < 9; i++) {
        const answer = await fetch(`${api}/auth/v1/registryPasswords`, { method: "POST", headers: person, body: "" });
        const body = (await answer.json()) as Listed;
        assert.equal(answer.status, 200, JSON.stringify(body));
        assert.equal(body.expireTime, undefined, "no ttl: it never expires");
        made2.push(body.id);
      }
      const tooMany = await fetch(`${api}/auth/v1/registryPasswords`, { method: "POST", headers: person, body: "{}" });
      assert.equal(tooMany.status, 429);
      assert.match(((await tooMany.json()) as { message: string }).message, /revoke one first/);
      for (const id of made2) {
        const revoked = await fetch(`${api}/auth/v1/registryPasswords/${id}`, { method: "DELETE", headers: person });
        await revoked.body?.cancel();
        assert.equal(revoked.status, 200);
      }
    });

    test("revoke: /token answers 401 at once, and so do the registry tokens it issued before; creation and revocation are in the audit log", async () => {
      const before = ((await (await tokenWith(basic(made.username, made.password))).json()) as { token: string }).token;
      const tagsWith = () => fetch(`${server.registryUrl}/v2/acme/app/tags/list`, { headers: { authorization: `Bearer ${before}` } });
      const served = await tagsWith();
      await served.body?.cancel();
      assert.equal(served.status, 200);
      const run = ok(await cli(["auth", "registry-password", "revoke", made.id]));
      const afterRevoke = await tagsWith();
      assert.equal(afterRevoke.status, 401);
      assert.match(await afterRevoke.text(), /registry password is revoked or expired/);
      assert.equal(run.stderr, `Revoked registry password ${made.id}\n`);
      const answer = await tokenWith(basic(made.username, made.password));
      await answer.body?.cancel();
      assert.equal(answer.status, 401);
      if (!skopeoSkip) await refused(skopeo("copy", "--src-tls-verify=false", "--src-creds", `${made.username}:${made.password}`, `docker://${host}/acme/app:v1`, outDir()), /unauthorized|401|invalid/i);
      assert.deepEqual(JSON.parse(ok(await cli(["auth", "registry-password", "list"])).stdout), { registryPasswords: [] });
      const again = await cli(["auth", "registry-password", "revoke", made.id]);
      assert.equal(again.code, 2, again.stderr);
      assert.equal(again.stderr, `platform-api: ${api}: you hold no registry password ${made.id}\n`);
      const lines = auditLines().filter((l) => l.action.startsWith("auth.registry_password."));
      const ours = lines.filter((l) => l.resource === made.id);
      assert.deepEqual(
        ours.map((l) => [l.host, l.action, l.outcome, l.actor.subject]),
        [
          ["api", "auth.registry_password.create", "OK", personUid],
          ["api", "auth.registry_password.revoke", "OK", personUid],
          ["api", "auth.registry_password.revoke", "NOT_FOUND", personUid],
        ],
      );
      assert.equal(lines.filter((l) => l.action === "auth.registry_password.create" && l.outcome === "RESOURCE_EXHAUSTED").length, 1);
      assert.ok(!readFileSync(auditLog, "utf8").includes(PASSWORD.exec(made.password)![2]), "no secret in the audit log");
    });
  });
}
