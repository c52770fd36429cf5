import assert from "node:assert/strict";
import { execFile, spawn } from "node:child_process";
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { delimiter, join } from "node:path";
import { after, before, describe, test } from "node:test";
import { builtInRole } from "../../src/access/capabilities.js";
import { dropFresh, testDatabases } from "../support/databases.js";
import { writeLayout, type BuiltLayout } from "../support/oci-layout.js";
import { BIN, inRepo } from "../support/repo.js";
import { freePort, skopeoSkip } from "../support/skopeo.js";
import { startTestIdp, type TestIdp } from "../support/test-idp.js";
import { startTestServer, type TestServer } from "../support/test-server.js";

/**
 * A person's docker and skopeo at the registry with no token pasted: `platform-api auth
 * configure-docker` names the package's credential helper in Docker's config.json and a containers
 * auth file, and `bin/docker-credential-platform-api`, spawned as docker spawns it (an action as its
 * argument, the server URL on stdin, the answer on stdout, the exit status), mints a registry token
 * from the CLI's session at each `get`. Then skopeo, finding the helper on PATH through
 * `--authfile`, pushes and pulls with it; the session's refresh token rotates across the helper's
 * calls and the CLI's; a revoked session (at the API, or by logout) makes `get` fail saying to log
 * in. A real server (in process) whose login provider is a real OpenID Provider (test-idp.ts).
 */

const HELPER = inRepo("bin/docker-credential-platform-api");
const WALKER = inRepo("test/support/login-walk-browser.ts");
const TSX = createRequire(import.meta.url).resolve("tsx");
const dir = mkdtempSync(join(tmpdir(), "platform-api-credential-helper-"));
after(() => rmSync(dir, { recursive: true, force: true }));

/** The BROWSER `platform-api login` opens: a script that walks the sign-in as ada. */
const browser = join(dir, "browser.sh");
writeFileSync(browser, `#!/bin/sh\nexec "${process.execPath}" --import "${TSX}" "${WALKER}" "$1" >>"${join(dir, "browser.log")}" 2>&1\n`);
chmodSync(browser, 0o755);

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs `file` with `args`, `input` on its stdin, in `env` over this process's environment. */
function spawned(file: string, args: string[], env: Record<string, string>, input = ""): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(file, args, { env: { ...process.env, ...env }, stdio: ["pipe", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    child.on("error", reject);
    child.on("close", (code) => resolve({ code: code ?? -1, stdout, stderr }));
    child.stdin.end(input);
  });
}

const ok = (run: Run): Run => (assert.equal(run.code, 0, `exit ${run.code}: ${run.stderr}${run.stdout}`), run);

interface Session {
  token: string;
  expiry: string;
  refreshToken: string;
}

const claimsOf = (jwt: string) => JSON.parse(Buffer.from(jwt.split(".")[1], "base64url").toString("utf8")) as { sub: string; aud: string | string[]; iat: number; exp: number };

for (const database of await testDatabases()) {
  describe(`docker-credential-platform-api and auth configure-docker on ${database.name}`, { skip: database.skip ?? skopeoSkip, timeout: 180_000 }, () => {
    let idp: TestIdp;
    let server: TestServer;
    let dbUrl: string;
    let api: string;
    let host: string;
    let registryUrl: string;
    let layout: BuiltLayout;
    const root = join(dir, database.name);
    const config = join(root, "config");
    const dockerConfig = join(root, "docker");
    const authFile = join(root, "containers", "auth.json");
    const credentialsFile = join(config, "platform-api", "credentials.json");
    /** What docker, skopeo and the CLI run with: their own HOME and configuration, the package's bin folder first on PATH. */
    const env = {
      XDG_CONFIG_HOME: config,
      HOME: join(root, "home"),
      DOCKER_CONFIG: dockerConfig,
      XDG_RUNTIME_DIR: "",
      REGISTRY_AUTH_FILE: "",
      PLATFORM_API_URL: "",
      BROWSER: browser,
      PATH: `${inRepo("bin")}${delimiter}${process.env.PATH}`,
    };
    const cli = (...args: string[]) => spawned(process.execPath, [BIN, ...args], env);
    const helper = (action: string, input = "") => spawned(HELPER, [action], env, input);
    const session = () => (JSON.parse(readFileSync(credentialsFile, "utf8")) as { sessions: Record<string, Session> }).sessions[api];
    /** skopeo with Docker's configuration in `docker` (it reads config.json's credHelpers too). */
    const skopeoWith = (docker: string, ...args: string[]) =>
      new Promise<Run>((resolve) =>
        execFile("skopeo", ["--insecure-policy", ...args], { env: { ...process.env, ...env, DOCKER_CONFIG: docker }, timeout: 60_000 }, (error, stdout, stderr) =>
          resolve({ code: error ? Number((error as { code?: number }).code ?? 1) : 0, stdout, stderr }),
        ),
      );
    /** skopeo finding no credential but what --authfile names. */
    const skopeo = (...args: string[]) => skopeoWith(join(root, "no-docker-config"), ...args);

    before(async () => {
      mkdirSync(env.HOME, { recursive: true });
      dbUrl = await database.fresh();
      idp = await startTestIdp();
      const port = await freePort();
      host = `127.0.0.1:${port}`;
      registryUrl = `http://${host}`;
      server = await startTestServer({
        apiUrl: "listen",
        dbUrl,
        registryUrl,
        registryPort: port,
        login: { issuer: idp.issuer, clientId: "platform", clientSecret: "s3cret" },
        upstreamIssuers: { allowHttp: true, allowPrivateAddresses: true },
      });
      api = server.apiUrl;
      await idp.addClient({ client_id: "platform", client_secret: "s3cret", redirect_uris: [`${api}/auth/v1/callback`], token_endpoint_auth_method: "client_secret_post" });
      idp.setAccount("ada", { email: "ada@example.com", email_verified: true, name: "Ada" });
      // ada signs in and joins as an editor of acme, which holds the repo acme/app.
      ok(await cli("login", "--api-url", api, "--timeout", "30s"));
      const owner = { authorization: `Bearer ${server.ownerToken}`, "content-type": "application/json" };
      const invite = await fetch(`${api}/iam/v2/groupInvites/${server.org.uid}`, { method: "POST", headers: owner, body: JSON.stringify({ roleUid: builtInRole("editor").uid, ttl: "3600s" }) });
      const { code } = (await invite.json()) as { code: string };
      ok(await cli("invite", "accept", "--", code));
      const repo = await fetch(`${api}/registry/v2/repos/${server.org.uid}`, { method: "POST", headers: owner, body: JSON.stringify({ name: "app" }) });
      assert.equal(repo.status, 200, await repo.text());
      layout = writeLayout(join(root, "layout"), { architectures: ["amd64"], ref: "v1", layerBytes: [20_000] });
    });
    after(async () => {
      await server?.close();
      await idp?.close();
      await dropFresh(dbUrl);
    });

    test("auth configure-docker: credHelpers in Docker's config.json (its other keys kept) and in --authfile (created 0600); no token in either", async () => {
      mkdirSync(dockerConfig, { recursive: true });
      const existing = { auths: { "ghcr.io": { auth: "dXNlcjpwYXNz" } }, credHelpers: { "gcr.io": "gcloud" }, psFormat: "table {{.ID}}" };
      writeFileSync(join(dockerConfig, "config.json"), JSON.stringify(existing), { mode: 0o644 });
      const before = session();
      const run = ok(await cli("auth", "configure-docker", "--registry", host, "--authfile", authFile));
      assert.equal(run.stdout, "");
      assert.match(run.stderr, new RegExp(`^${host}: credHelpers names docker-credential-platform-api in ${join(dockerConfig, "config.json")}, ${authFile}; each pull or push gets a token for ${registryUrl} from your session at ${api}\\n$`));
      const docker = readFileSync(join(dockerConfig, "config.json"), "utf8");
      assert.deepEqual(JSON.parse(docker), { ...existing, credHelpers: { "gcr.io": "gcloud", [host]: "platform-api" } });
      assert.equal(statSync(join(dockerConfig, "config.json")).mode & 0o777, 0o644, "an existing file keeps its mode");
      const auth = readFileSync(authFile, "utf8");
      assert.deepEqual(JSON.parse(auth), { credHelpers: { [host]: "platform-api" } });
      assert.equal(statSync(authFile).mode & 0o777, 0o600);
      const registries = JSON.parse(readFileSync(join(config, "platform-api", "registries.json"), "utf8")) as unknown;
      assert.deepEqual(registries, { [host]: { api, registryUrl } });
      const after = session();
      assert.notEqual(after.refreshToken, before.refreshToken, "one registry token was minted, as a check");
      assert.equal(after.token, before.token, "the session's own access token is kept");
      for (const text of [docker, auth, JSON.stringify(registries)]) {
        assert.doesNotMatch(text, /eyJ|Secret/, "no token is written");
        assert.ok(!text.includes(after.refreshToken) && !text.includes(after.token));
      }
    });

    test("auth configure-docker refuses a missing --registry (2) and a host that is no registry", async () => {
      const missing = await cli("auth", "configure-docker");
      assert.equal(missing.code, 2, missing.stderr);
      assert.match(missing.stderr, /auth configure-docker needs --registry <host>/);
      const notRegistry = await cli("auth", "configure-docker", "--registry", new URL(api).host);
      assert.equal(notRegistry.code, 2, notRegistry.stderr);
      assert.match(notRegistry.stderr, /\/v2\/ answered 404 without a Bearer challenge/);
    });

    test("the helper protocol as docker drives it: get, list, store, erase, version, and what it refuses", async () => {
      const first = session();
      const got = ok(await helper("get", `${host}\n`));
      const answer = JSON.parse(got.stdout) as { ServerURL: string; Username: string; Secret: string };
      assert.deepEqual([answer.ServerURL, answer.Username], [host, "_token"]);
      const claims = claimsOf(answer.Secret);
      assert.deepEqual([claims.aud].flat(), [registryUrl], "a token for the registry's audience only");
      assert.equal(claims.sub, claimsOf(first.token).sub, "the person of the session");
      assert.ok(claims.exp - claims.iat <= 3600, "short-lived");
      const second = session();
      assert.notEqual(second.refreshToken, first.refreshToken, "get refreshed the session");
      assert.equal(second.token, first.token);

      const again = JSON.parse(ok(await helper("get", `http://${host}/v2/`)).stdout) as { ServerURL: string; Secret: string };
      assert.equal(again.ServerURL, `http://${host}/v2/`, "the server URL is answered as asked");
      assert.notEqual(again.Secret, answer.Secret, "each get mints its own token");
      assert.notEqual(session().refreshToken, second.refreshToken);
      const who = JSON.parse(ok(await cli("whoami")).stdout) as { subject: string };
      assert.equal(who.subject, claims.sub, "the CLI's session goes on after the helper's refreshes");

      assert.deepEqual(await helper("get", "registry.example.com\n"), { code: 1, stdout: "credentials not found in native keychain\n", stderr: "" });
      assert.deepEqual(await helper("get", "\n"), { code: 1, stdout: "no credentials server URL\n", stderr: "" });
      assert.deepEqual(JSON.parse(ok(await helper("list")).stdout), { [host]: "_token" });
      const held = readFileSync(credentialsFile, "utf8");
      assert.deepEqual(await helper("store", JSON.stringify({ ServerURL: host, Username: "someone", Secret: "pasted" })), { code: 0, stdout: "", stderr: "" });
      assert.deepEqual(await helper("erase", `${host}\n`), { code: 0, stdout: "", stderr: "" });
      assert.equal(readFileSync(credentialsFile, "utf8"), held, "store and erase leave the session alone");
      assert.doesNotMatch(readFileSync(join(dockerConfig, "config.json"), "utf8"), /pasted|someone/);
      assert.match(ok(await helper("version")).stdout, /^docker-credential-platform-api \(platform-api\) \d+\.\d+\.\d+\n$/);
      assert.deepEqual(await helper("frobnicate"), { code: 1, stdout: "Unknown credential action `frobnicate`\n", stderr: "" });
      const usage = await spawned(HELPER, [], env);
      assert.deepEqual([usage.code, usage.stdout], [1, "Usage: docker-credential-platform-api <store|get|erase|list|version>\n"]);
    });

    test("skopeo with --authfile pushes and pulls through the helper; the session is refreshed across its calls", async () => {
      const anonymous = await skopeo("copy", "--dest-tls-verify=false", `oci:${layout.dir}:v1`, `docker://${host}/acme/app:v1`);
      assert.notEqual(anonymous.code, 0, "without the auth file, no credential");
      assert.match(anonymous.stderr, /401|unauthorized|authentication required/i, anonymous.stderr);
      const before = session();
      ok(await skopeo("copy", "--authfile", authFile, "--dest-tls-verify=false", `oci:${layout.dir}:v1`, `docker://${host}/acme/app:v1`));
      const pushed = session();
      assert.notEqual(pushed.refreshToken, before.refreshToken, "the push asked the helper");
      const pulled = join(root, "pulled");
      ok(await skopeo("copy", "--authfile", authFile, "--src-tls-verify=false", `docker://${host}/acme/app:v1`, `oci:${pulled}:v1`));
      assert.notEqual(session().refreshToken, pushed.refreshToken, "the pull asked it again");
      const index = JSON.parse(readFileSync(join(pulled, "index.json"), "utf8")) as { manifests: { digest: string }[] };
      assert.equal(index.manifests[0].digest, layout.top.digest, "the image pushed comes back");
      const inspected = ok(await skopeo("inspect", "--authfile", authFile, "--tls-verify=false", "--format", "{{.Digest}}", `docker://${host}/acme/app:v1`));
      assert.equal(inspected.stdout.trim(), layout.top.digest);
      const viaDocker = ok(await skopeoWith(dockerConfig, "inspect", "--tls-verify=false", "--format", "{{.Digest}}", `docker://${host}/acme/app:v1`));
      assert.equal(viaDocker.stdout.trim(), layout.top.digest, "Docker's config.json names the helper as well");
      ok(await cli("whoami"));
    });

    test("a session revoked at the API makes get fail saying to log in; after logout get says so too", async () => {
      const revoked = await fetch(`${api}/auth/v1/revoke`, { method: "POST", body: new URLSearchParams({ token: session().refreshToken }) });
      assert.equal(revoked.status, 200, await revoked.text());
      assert.deepEqual(await helper("get", host), { code: 1, stdout: `your session has ended: run platform-api login --api-url ${api}\n`, stderr: "" });
      const refused = await skopeo("copy", "--authfile", authFile, "--src-tls-verify=false", `docker://${host}/acme/app:v1`, `oci:${join(root, "refused")}:v1`);
      assert.notEqual(refused.code, 0);
      assert.match(refused.stderr, /run platform-api login --api-url/, refused.stderr);

      ok(await cli("login", "--api-url", api, "--timeout", "30s"));
      ok(await helper("get", host));
      ok(await cli("logout"));
      assert.deepEqual(await helper("get", host), { code: 1, stdout: `not signed in to ${api}: run platform-api login --api-url ${api}\n`, stderr: "" });
    });
  });
}
