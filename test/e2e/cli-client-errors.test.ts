import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, test } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { BIN } from "../support/repo.js";

/**
 * The client commands through the real process, where no server is needed: no session, an API
 * that cannot be reached, logout without a session, and the browser half of `login` (a BROWSER
 * script plays the redirect to 127.0.0.1 back, as the API would after the identity provider).
 * Signing in against the real login endpoints is tested once they land on main.
 */

const dir = mkdtempSync(join(tmpdir(), "platform-api-cli-client-"));
after(() => rmSync(dir, { recursive: true, force: true }));

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

let configs = 0;
/** A fresh XDG_CONFIG_HOME. */
const freshConfig = () => join(dir, `config-${++configs}`);

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

/** A URL on which nothing listens. */
async function closedUrl(): Promise<string> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return `http://127.0.0.1:${port}`;
}

/** Writes a credentials file in `config` with a session for `api` expiring in `inMs`. */
function storeSession(config: string, api: string, inMs: number): string {
  mkdirSync(join(config, "platform-api"), { recursive: true, mode: 0o700 });
  const file = join(config, "platform-api", "credentials.json");
  const session = { token: "access-token-never-printed", expiry: new Date(Date.now() + inMs).toISOString(), refreshToken: "refresh-token-never-printed" };
  writeFileSync(file, JSON.stringify({ current: api, sessions: { [api]: session } }), { mode: 0o600 });
  return file;
}

/** Exit status 2, one line on stderr matching `message`, nothing on stdout, no token, no stack. */
function refused(run: Run, message: RegExp): void {
  assert.equal(run.code, 2, run.stderr);
  assert.equal(run.stdout, "");
  assert.equal(run.stderr.trim().split("\n").length, 1, run.stderr);
  assert.match(run.stderr, message);
  assert.doesNotMatch(run.stderr, /never-printed|\n\s+at /);
}

describe("whoami", () => {
  test("without a session: not signed in, with the login command to run", async () => {
    const api = await closedUrl();
    refused(await cli(["whoami", "--api-url", api], { XDG_CONFIG_HOME: freshConfig() }), new RegExp(`^platform-api: not signed in to ${api}: run platform-api login --api-url ${api}$`, "m"));
  });

  test("an API that cannot be reached, named by --api-url, PLATFORM_API_URL or the last sign-in", async () => {
    const api = await closedUrl();
    const config = freshConfig();
    storeSession(config, api, 3_600_000);
    const cannotReach = new RegExp(`^platform-api: cannot reach ${api}: ECONNREFUSED$`, "m");
    refused(await cli(["whoami", "--api-url", api], { XDG_CONFIG_HOME: config }), cannotReach);
    refused(await cli(["whoami"], { XDG_CONFIG_HOME: config, PLATFORM_API_URL: api }), cannotReach);
    refused(await cli(["whoami"], { XDG_CONFIG_HOME: config }), cannotReach);
  });

  test("a session about to expire is refreshed first: an unreachable API says so, and the file is left as it was", async () => {
    const api = await closedUrl();
    const config = freshConfig();
    const file = storeSession(config, api, 10_000);
    const before = readFileSync(file, "utf8");
    refused(await cli(["whoami", "--api-url", api], { XDG_CONFIG_HOME: config }), new RegExp(`cannot reach ${api}: ECONNREFUSED`));
    assert.equal(readFileSync(file, "utf8"), before);
    assert.ok(!existsSync(join(config, "platform-api", "credentials.lock")), "the lock is released");
  });
});

describe("logout and invite accept", () => {
  test("logout without a session says so and succeeds", async () => {
    const api = await closedUrl();
    const run = await cli(["logout", "--api-url", api], { XDG_CONFIG_HOME: freshConfig() });
    assert.deepEqual(run, { code: 0, stdout: "", stderr: `Not signed in to ${api}\n` });
  });

  test("logout forgets the session even when the API cannot revoke it", async () => {
    const api = await closedUrl();
    const config = freshConfig();
    const file = storeSession(config, api, 3_600_000);
    const run = await cli(["logout"], { XDG_CONFIG_HOME: config });
    assert.deepEqual(run, { code: 0, stdout: "", stderr: `Signed out of ${api}\n` });
    assert.deepEqual(JSON.parse(readFileSync(file, "utf8")), { sessions: {} });
  });

  test("invite accept needs exactly one code; without a session it is refused", async () => {
    const api = await closedUrl();
    const env = { XDG_CONFIG_HOME: freshConfig() };
    refused(await cli(["invite", "accept", "--api-url", api], env), /invite accept needs the invitation code \(see "platform-api invite accept --help"\)/);
    refused(await cli(["invite", "accept", "a", "b", "--api-url", api], env), /invite accept takes one code/);
    // An invitation code is base64url: one in 64 begins with "-", and goes after "--".
    refused(await cli(["invite", "accept", "-Oabc", "--api-url", api], env), /-O is not an option of invite accept; an operand that begins with "-" goes after "--"/);
    refused(await cli(["invite", "accept", "--api-url", api, "--", "-Oabc"], env), new RegExp(`not signed in to ${api}`));
    refused(await cli(["invite", "accept", "code", "--api-url", api], env), new RegExp(`not signed in to ${api}`));
  });
});

/**
 * A BROWSER that, instead of signing in, sends the loopback redirect of `mode` and writes what it
 * was asked to open and the page it was shown to `out`.
 */
function browserScript(mode: "code" | "error" | "wrong-state" | "nothing", out: string): string {
  const path = join(dir, `browser-${mode}.mjs`);
  writeFileSync(
    path,
    `#!${process.execPath}
import { writeFileSync } from "node:fs";
const opened = new URL(process.argv[2]);
const back = new URL(opened.searchParams.get("redirect_uri"));
const state = opened.searchParams.get("state");
const mode = ${JSON.stringify(mode)};
if (mode === "code") back.search = new URLSearchParams({ code: "one-time", state });
if (mode === "error") back.search = new URLSearchParams({ error: "access_denied", error_description: "the person said <no>", state });
if (mode === "wrong-state") back.search = new URLSearchParams({ code: "one-time", state: "forged" });
let page = "";
if (mode !== "nothing") page = await (await fetch(back)).text();
writeFileSync(${JSON.stringify(out)}, JSON.stringify({ opened: opened.href, page }));
`,
  );
  chmodSync(path, 0o755);
  return path;
}

describe("login in a browser, up to the token request", () => {
  async function login(mode: "code" | "error" | "wrong-state" | "nothing", extra: string[] = []) {
    const api = await closedUrl();
    const out = join(dir, `browser-${mode}.json`);
    const config = freshConfig();
    const run = await cli(["login", "--api-url", api, ...extra], { XDG_CONFIG_HOME: config, BROWSER: browserScript(mode, out) });
    // The browser runs on its own: it may finish after the CLI has.
    for (let waited = 0; mode !== "nothing" && !existsSync(out) && waited < 10_000; waited += 50) await sleep(50);
    const seen = existsSync(out) ? (JSON.parse(readFileSync(out, "utf8")) as { opened: string; page: string }) : undefined;
    return { api, run, seen, config };
  }

  test("the URL opened asks /auth/v1/login for a loopback redirect with PKCE S256, a state and the identity provider", async () => {
    const { api, run, seen, config } = await login("code", ["--identity-provider", "idp-uid"]);
    const opened = new URL(seen!.opened);
    assert.equal(`${opened.origin}${opened.pathname}`, `${api}/auth/v1/login`);
    assert.match(opened.searchParams.get("redirect_uri")!, /^http:\/\/127\.0\.0\.1:\d+\/callback$/);
    assert.match(opened.searchParams.get("code_challenge")!, /^[A-Za-z0-9_-]{43}$/);
    assert.equal(opened.searchParams.get("code_challenge_method"), "S256");
    assert.ok(opened.searchParams.get("state")!.length >= 16);
    assert.equal(opened.searchParams.get("identity_provider"), "idp-uid");
    assert.match(seen!.page, /Signed in\. You can close this window\./);
    // The code is then traded at the API, which cannot be reached here.
    assert.equal(run.code, 2);
    assert.equal(run.stderr, `Open this URL to sign in: ${seen!.opened}\nplatform-api: cannot reach ${api}: ECONNREFUSED\n`);
    assert.ok(!existsSync(join(config, "platform-api", "credentials.json")), "nothing stored");
  });

  test("a refusal in the redirect ends the login with its description, and the page says so", async () => {
    const { run, seen } = await login("error");
    assert.match(run.stderr, /^platform-api: sign-in refused: the person said <no>$/m);
    assert.equal(run.code, 2);
    assert.match(seen!.page, /Sign-in failed: sign-in refused: the person said &#60;no&#62;/);
  });

  test("a redirect with another state is refused, and the page says so", async () => {
    const { run, seen } = await login("wrong-state");
    assert.match(run.stderr, /^platform-api: the answer does not belong to this sign-in \(its state differs\)/m);
    assert.equal(run.code, 2);
    assert.match(seen!.page, /Sign-in failed: the answer does not belong to this sign-in/);
  });

  test("no redirect within --timeout", async () => {
    const { run } = await login("nothing", ["--timeout", "1s"]);
    assert.match(run.stderr, /^platform-api: no sign-in within 1 s; run platform-api login again$/m);
    assert.equal(run.code, 2);
  });

  test("--timeout that is not a duration is a usage error", async () => {
    refused(await cli(["login", "--timeout", "soon"], { XDG_CONFIG_HOME: freshConfig() }), /--timeout: "soon" is not a duration/);
  });
});

test("login --headless against an API that cannot be reached", async () => {
  const api = await closedUrl();
  refused(await cli(["login", "--headless", "--api-url", api], { XDG_CONFIG_HOME: freshConfig() }), new RegExp(`^platform-api: cannot reach ${api}: ECONNREFUSED$`, "m"));
});
