import assert from "node:assert/strict";
import { execFile, spawn } from "node:child_process";
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { builtInRole } from "../../src/access/capabilities.js";
import { dropFresh, testDatabases } from "../support/databases.js";
import { walkLoginOverHttp } from "../support/login-walk.js";
import { startTestIdp, type TestIdp } from "../support/test-idp.js";
import { startTestServer, type TestServer } from "../support/test-server.js";
import { BIN, inRepo } from "../support/repo.js";

/**
 * People sign in with the CLI, end to end: `platform-api login` (a browser, played by a BROWSER
 * script walking the sign-in over HTTP, and --headless), `whoami`, `invite accept`, the refresh of
 * an expiring session and `logout`, each a child process with its own XDG_CONFIG_HOME, against a
 * real server (in process) whose login provider is a real OpenID Provider (test-idp.ts).
 */

const WALKER = inRepo("test/support/login-walk-browser.ts");
const TSX = createRequire(import.meta.url).resolve("tsx");
const dir = mkdtempSync(join(tmpdir(), "platform-api-cli-login-"));
after(() => rmSync(dir, { recursive: true, force: true }));

/** The BROWSER: a shell script that walks the sign-in as ada and logs what it saw. */
const browserLog = join(dir, "browser.log");
const browser = join(dir, "browser.sh");
writeFileSync(browser, `#!/bin/sh\nexec "${process.execPath}" --import "${TSX}" "${WALKER}" "$1" >>"${browserLog}" 2>&1\n`);
chmodSync(browser, 0o755);

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

function cli(args: string[], env: Record<string, string>): Promise<Run> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [BIN, ...args],
      { encoding: "utf8", timeout: 60_000, env: { ...process.env, PLATFORM_API_URL: "", BROWSER: "", ...env } },
      (error, stdout, stderr) => resolve({ code: error ? Number((error as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}

const ok = (run: Run): Run => (assert.equal(run.code, 0, `exit ${run.code}: ${run.stderr}${run.stdout}`), run);

interface Session {
  token: string;
  expiry: string;
  refreshToken: string;
}

interface WhoAmI {
  issuer: string;
  subject: string;
  email?: string;
  profile?: { name?: string };
  capabilities?: { group?: { id?: string }; role?: { id?: string; name?: string }; capabilities?: string[] }[];
}

/** POST /sts/exchange_refresh_token with `refreshToken`: the status. */
async function exchange(api: string, refreshToken: string): Promise<number> {
  const response = await fetch(`${api}/sts/exchange_refresh_token`, { method: "POST", headers: { authorization: `Bearer ${refreshToken}` } });
  await response.body?.cancel();
  return response.status;
}

const subjectOf = (jwt: string): string => (JSON.parse(Buffer.from(jwt.split(".")[1], "base64url").toString("utf8")) as { sub: string }).sub;

/** A test IdP with ada, and a server signing people in there (its client "platform" registered once the server's URL is known). */
async function startLoginServer(dbUrl: string, accessTokenTtlSeconds?: number): Promise<{ idp: TestIdp; server: TestServer }> {
  const idp = await startTestIdp();
  const server = await startTestServer({
    apiUrl: "listen",
    dbUrl,
    login: { issuer: idp.issuer, clientId: "platform", clientSecret: "s3cret", ...(accessTokenTtlSeconds === undefined ? {} : { accessTokenTtlSeconds }) },
    upstreamIssuers: { allowHttp: true, allowPrivateAddresses: true },
  });
  await idp.addClient({ client_id: "platform", client_secret: "s3cret", redirect_uris: [`${server.apiUrl}/auth/v1/callback`], token_endpoint_auth_method: "client_secret_post" });
  idp.setAccount("ada", { email: "ada@example.com", email_verified: true, name: "Ada" });
  return { idp, server };
}

for (const database of await testDatabases()) {
  describe(`platform-api login, whoami, invite accept, logout on ${database.name}`, { skip: database.skip, timeout: 120_000 }, () => {
    let idp: TestIdp;
    let server: TestServer;
    let dbUrl: string;
    let api: string;
    const config = join(dir, `config-${database.name}`);
    const home = join(dir, `home-${database.name}`);
    const file = join(config, "platform-api", "credentials.json");
    const env = { XDG_CONFIG_HOME: config, HOME: home, BROWSER: browser };
    const credentials = () => JSON.parse(readFileSync(file, "utf8")) as { current?: string; sessions: Record<string, Session> };
    const session = () => credentials().sessions[api];
    /** Rewrites the stored session's expiry (as if its access token were about to end). */
    const expire = () => {
      const stored = credentials();
      stored.sessions[api].expiry = new Date(Date.now() - 1000).toISOString();
      writeFileSync(file, JSON.stringify(stored), { mode: 0o600 });
    };
    let personUid = "";

    before(async () => {
      mkdirSync(home, { recursive: true });
      dbUrl = await database.fresh();
      ({ idp, server } = await startLoginServer(dbUrl));
      api = server.apiUrl;
    });
    after(async () => {
      await server?.close();
      await idp?.close();
      await dropFresh(dbUrl);
    });

    test("login in a browser: the session is stored, 0600, as the current API", async () => {
      const run = ok(await cli(["login", "--api-url", api, "--timeout", "30s"], env));
      assert.match(run.stderr, new RegExp(`Open this URL to sign in: ${api}/auth/v1/login\\?`));
      assert.match(run.stderr, new RegExp(`Signed in to ${api}\\n$`));
      assert.equal(run.stdout, "");
      assert.equal(statSync(file).mode & 0o777, 0o600);
      assert.equal(statSync(join(config, "platform-api")).mode & 0o777, 0o700);
      const stored = credentials();
      assert.equal(stored.current, api);
      assert.deepEqual(Object.keys(stored.sessions), [api]);
      const { token, expiry, refreshToken } = stored.sessions[api];
      assert.ok(token && refreshToken && Date.parse(expiry) > Date.now());
      assert.match(readFileSync(browserLog, "utf8"), /^200 http:\/\/127\.0\.0\.1:\d+\/callback\?/m, "the browser ended on the CLI's loopback page");
      personUid = subjectOf(token);
    });

    test("whoami before registering: the person, no capabilities; the API refuses what needs registration", async () => {
      const who = JSON.parse(ok(await cli(["whoami"], env)).stdout) as WhoAmI;
      assert.equal(who.subject, personUid);
      assert.equal(who.email, "ada@example.com");
      assert.equal(who.profile?.name, "Ada");
      assert.deepEqual(who.capabilities ?? [], []);
      const groups = await fetch(`${api}/iam/v2/groups`, { headers: { authorization: `Bearer ${session().token}` } });
      const body = (await groups.json()) as { message?: string };
      assert.equal(groups.status, 403, JSON.stringify(body));
      assert.match(body.message ?? "", /not registered/);
    });

    test("invite accept: the owner's invite makes the person a viewer of the organization", async () => {
      const invite = { roleUid: builtInRole("viewer").uid, ttl: "3600s" };
      const made = await fetch(`${api}/iam/v2/groupInvites/${server.org.uid}`, {
        method: "POST",
        headers: { authorization: `Bearer ${server.ownerToken}`, "content-type": "application/json" },
        body: JSON.stringify(invite),
      });
      const created = (await made.json()) as { code?: string };
      assert.equal(made.status, 200, JSON.stringify(created));
      const accepted = JSON.parse(ok(await cli(["invite", "accept", "--", created.code!], env)).stdout) as { identity: string; group: string };
      assert.deepEqual(accepted, { identity: personUid, group: server.org.uid });
      const who = JSON.parse(ok(await cli(["whoami"], env)).stdout) as WhoAmI;
      assert.equal(who.subject, personUid);
      const grant = who.capabilities?.find((c) => c.group?.id === server.org.uid);
      assert.ok(grant, JSON.stringify(who.capabilities));
      assert.deepEqual([grant.role?.id, grant.role?.name], [builtInRole("viewer").uid, "viewer"]);
      assert.ok(grant.capabilities?.some((c) => c === "groups.list"), JSON.stringify(grant.capabilities));
      const groups = await fetch(`${api}/iam/v2/groups/${server.org.uid}`, { headers: { authorization: `Bearer ${session().token}` } });
      await groups.body?.cancel();
      assert.equal(groups.status, 200, "the same token carries the new grant");
    });

    test("a session about to expire is refreshed: new tokens stored; reusing the old refresh token revokes the family", async () => {
      const before = session();
      expire();
      const who = JSON.parse(ok(await cli(["whoami"], env)).stdout) as WhoAmI;
      assert.equal(who.subject, personUid);
      const after = session();
      assert.notEqual(after.token, before.token);
      assert.notEqual(after.refreshToken, before.refreshToken);
      assert.ok(Date.parse(after.expiry) > Date.now() + 60_000);
      assert.equal(subjectOf(after.token), personUid);
      assert.equal(statSync(file).mode & 0o777, 0o600);
      assert.equal(await exchange(api, before.refreshToken), 401, "a spent refresh token is refused");
      assert.equal(await exchange(api, after.refreshToken), 401, "and its whole family is revoked");
      expire();
      const ended = await cli(["whoami"], env);
      assert.equal(ended.code, 2, ended.stderr);
      assert.equal(ended.stderr, `platform-api: your session has ended: run platform-api login --api-url ${api}\n`);
    });

    test("login --headless: the person confirms the code elsewhere; the CLI polls until signed in", async () => {
      const child = spawn(process.execPath, [BIN, "login", "--headless", "--api-url", api, "--timeout", "60s"], {
        env: { ...process.env, PLATFORM_API_URL: "", ...env, BROWSER: "/bin/false" },
        stdio: ["ignore", "pipe", "pipe"],
      });
      let stderr = "";
      let stdout = "";
      child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
      const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
      try {
        const verification = await new Promise<string>((resolve, reject) => {
          child.stderr.on("data", (chunk: Buffer) => {
            stderr += chunk.toString();
            const match = /^Open (\S+) and confirm the code (\S+)$/m.exec(stderr);
            if (match) resolve(match[1]);
          });
          void exited.then((code) => reject(new Error(`login --headless exited (${code}) before printing a URL: ${stderr}`)));
        });
        assert.ok(verification.startsWith(`${api}/auth/v1/device?user_code=`), verification);
        const end = await walkLoginOverHttp(verification, "ada");
        assert.equal(end.status, 200, end.body);
        assert.equal(end.url.pathname, "/auth/v1/callback");
        assert.match(end.body ?? "", /You are signed in/);
        const code = await exited;
        assert.equal(code, 0, stderr);
        assert.match(stderr, new RegExp(`Signed in to ${api}\\n$`));
        assert.equal(stdout, "");
      } finally {
        child.kill();
      }
      assert.equal(credentials().current, api);
      const who = JSON.parse(ok(await cli(["whoami"], env)).stdout) as WhoAmI;
      assert.equal(who.subject, personUid, "the same person, the same identity");
      assert.equal(who.capabilities?.find((c) => c.group?.id === server.org.uid)?.role?.name, "viewer");
    });

    test("logout: the session is gone from the file and its refresh token is revoked", async () => {
      const held = session();
      const run = ok(await cli(["logout"], env));
      assert.equal(run.stderr, `Signed out of ${api}\n`);
      assert.deepEqual(credentials(), { sessions: {} });
      assert.equal(await exchange(api, held.refreshToken), 401, "logout revoked the refresh token");
      const who = await cli(["whoami", "--api-url", api], env);
      assert.equal(who.code, 2);
      assert.match(who.stderr, /not signed in to/);
    });
  });

  describe(`an access token the API has let expire, on ${database.name}`, { skip: database.skip, timeout: 60_000 }, () => {
    let idp: TestIdp;
    let server: TestServer;
    let dbUrl: string;
    const config = join(dir, `config-short-${database.name}`);
    const env = { XDG_CONFIG_HOME: config, HOME: join(dir, `home-${database.name}`), BROWSER: browser };
    const file = join(config, "platform-api", "credentials.json");
    before(async () => {
      dbUrl = await database.fresh();
      ({ idp, server } = await startLoginServer(dbUrl, 2));
    });
    after(async () => {
      await server?.close();
      await idp?.close();
      await dropFresh(dbUrl);
    });

    test("is refused by the API (401); the CLI refreshes the session and sends the call again", async () => {
      const api = server.apiUrl;
      ok(await cli(["login", "--api-url", api, "--timeout", "30s"], env));
      const stored = JSON.parse(readFileSync(file, "utf8")) as { current: string; sessions: Record<string, Session> };
      const first = stored.sessions[api];
      assert.ok(Date.parse(first.expiry) - Date.now() <= 2000, `the access token lives 2 s: ${first.expiry}`);
      // The CLI is told the token lasts an hour, so it does not refresh ahead: the API's 401 makes it.
      stored.sessions[api] = { ...first, expiry: new Date(Date.now() + 3_600_000).toISOString() };
      writeFileSync(file, JSON.stringify(stored), { mode: 0o600 });
      await sleep(Math.max(0, Date.parse(first.expiry) - Date.now()) + 1100);
      const expired = await fetch(`${api}/auth/v1/ok`, { headers: { authorization: `Bearer ${first.token}` } });
      await expired.body?.cancel();
      assert.equal(expired.status, 401, "the API refuses the expired access token");
      const who = JSON.parse(ok(await cli(["whoami"], env)).stdout) as WhoAmI;
      assert.equal(who.subject, subjectOf(first.token));
      const now = (JSON.parse(readFileSync(file, "utf8")) as { sessions: Record<string, Session> }).sessions[api];
      assert.notEqual(now.token, first.token);
      assert.notEqual(now.refreshToken, first.refreshToken);
      assert.equal(await exchange(api, first.refreshToken), 401, "the old refresh token is spent");
      assert.equal(await exchange(api, now.refreshToken), 401, "and reusing it revoked the new one too");
    });
  });
}
