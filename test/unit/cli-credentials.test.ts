// The client commands' credentials file (src/cli/client/): where it lives, its modes, atomic
// replacement, the lock that serializes read-refresh-write across processes, and which API a
// command talks to. No server: a refresh that would need one is pointed at a closed port.
import assert from "node:assert/strict";
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, utimesSync, writeFileSync } from "node:fs";
import { execFile } from "node:child_process";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, beforeEach, describe, test } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { promisify } from "node:util";
import { apiUrlOf, apiUrlOption, DEFAULT_API_URL } from "../../src/cli/client/api-url.js";
import { refreshSession } from "../../src/cli/client/authorized-fetch.js";
import { withCredentialsLock } from "../../src/cli/client/credentials-lock.js";
import { credentialsDir, credentialsFile } from "../../src/cli/client/credentials-paths.js";
import { readCredentials, updateCredentials, writeCredentials, type Session } from "../../src/cli/client/credentials.js";
import { CommandError, parse, UsageError } from "../../src/command/options.js";
import { pathToFileURL } from "node:url";
import { inRepo } from "../support/repo.js";

const execFileAsync = promisify(execFile);
const root = mkdtempSync(join(tmpdir(), "platform-api-credentials-"));
after(() => rmSync(root, { recursive: true, force: true }));
const saved = { XDG_CONFIG_HOME: process.env.XDG_CONFIG_HOME, HOME: process.env.HOME, PLATFORM_API_URL: process.env.PLATFORM_API_URL };
after(() => Object.assign(process.env, saved));

let case_ = 0;
/** Each test gets its own XDG_CONFIG_HOME. */
beforeEach(() => {
  process.env.XDG_CONFIG_HOME = join(root, `config-${++case_}`);
  delete process.env.PLATFORM_API_URL;
});

const mode = (path: string) => statSync(path).mode & 0o777;
const session = (token: string, inMs = 3_600_000): Session => ({ token, expiry: new Date(Date.now() + inMs).toISOString(), refreshToken: `refresh-${token}` });

/** A URL on which nothing listens. */
async function closedUrl(): Promise<string> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return `http://127.0.0.1:${port}`;
}

describe("where the file lives", () => {
  test("under XDG_CONFIG_HOME when it is an absolute path", async () => {
    await writeCredentials({ sessions: {} });
    assert.equal(credentialsFile(), join(process.env.XDG_CONFIG_HOME!, "platform-api", "credentials.json"));
    assert.ok(statSync(credentialsFile()).isFile());
  });

  test("under ~/.config when XDG_CONFIG_HOME is unset, empty or relative", () => {
    process.env.HOME = join(root, "home");
    for (const value of [undefined, "", "relative/dir"]) {
      if (value === undefined) delete process.env.XDG_CONFIG_HOME;
      else process.env.XDG_CONFIG_HOME = value;
      assert.equal(credentialsDir(), join(root, "home", ".config", "platform-api"), String(value));
    }
  });
});

describe("modes and atomic writes", () => {
  test("the directory is 0700 and the file 0600, whatever the umask", async () => {
    const umask = process.umask(0);
    try {
      await writeCredentials({ current: "http://a", sessions: { "http://a": session("t") } });
    } finally {
      process.umask(umask);
    }
    assert.equal(mode(credentialsDir()), 0o700);
    assert.equal(mode(credentialsFile()), 0o600);
  });

  test("a wider directory or file is narrowed", async () => {
    mkdirSync(credentialsDir(), { recursive: true });
    chmodSync(credentialsDir(), 0o755);
    writeFileSync(credentialsFile(), JSON.stringify({ sessions: { "http://a": session("t") } }));
    chmodSync(credentialsFile(), 0o644);
    assert.ok((await readCredentials()).sessions["http://a"]);
    assert.equal(mode(credentialsFile()), 0o600);
    await writeCredentials({ sessions: {} });
    assert.equal(mode(credentialsDir()), 0o700);
  });

  test("a write replaces the file whole and leaves no temporary file", async () => {
    for (let i = 0; i < 5; i++) await writeCredentials({ current: `http://api-${i}`, sessions: { [`http://api-${i}`]: session(`t${i}`) } });
    assert.deepEqual(readdirSync(credentialsDir()), ["credentials.json"]);
    const credentials = await readCredentials();
    assert.equal(credentials.current, "http://api-4");
    assert.deepEqual(Object.keys(credentials.sessions), ["http://api-4"]);
    assert.equal(credentials.sessions["http://api-4"].token, "t4");
  });

  test("no file reads as no sessions; a file that is not ours is a CommandError naming it", async () => {
    assert.deepEqual(await readCredentials(), { sessions: {} });
    mkdirSync(credentialsDir(), { recursive: true });
    writeFileSync(credentialsFile(), "not json");
    await assert.rejects(readCredentials(), (e) => e instanceof CommandError && e.message.includes(credentialsFile()));
  });
});

describe("the lock", () => {
  test("concurrent updates are serialized: none is lost", async () => {
    await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        updateCredentials(async (credentials) => {
          await sleep(5);
          credentials.sessions[`http://api-${i}`] = session(`t${i}`);
          return true;
        }),
      ),
    );
    assert.equal(Object.keys((await readCredentials()).sessions).length, 8);
    assert.ok(!readdirSync(credentialsDir()).includes("credentials.lock"), "released");
  });

  test("processes updating at once lose no update", async () => {
    const module = pathToFileURL(inRepo("src/cli/client/credentials.ts")).href;
    const script = `const { updateCredentials } = await import(${JSON.stringify(module)});
      for (let i = 0; i < 10; i++) await updateCredentials(async (c) => { await new Promise((r) => setTimeout(r, 2)); c.sessions[process.pid + "-" + i] = { token: "t", expiry: "", refreshToken: "r" }; return true; });`;
    const children = Array.from({ length: 3 }, () => execFileAsync(process.execPath, ["--import", "tsx", "--input-type=module", "-e", script], { env: process.env }));
    await Promise.all(children);
    assert.equal(Object.keys((await readCredentials()).sessions).length, 30);
  });

  test("a held lock is waited for; it is released when the critical section throws", async () => {
    await assert.rejects(withCredentialsLock(async () => Promise.reject(new Error("boom"))), /boom/);
    const lock = join(credentialsDir(), "credentials.lock");
    writeFileSync(lock, "another process");
    const start = Date.now();
    setTimeout(() => rmSync(lock), 300);
    await withCredentialsLock(async () => undefined);
    assert.ok(Date.now() - start >= 290, "waited for the other process");
  });

  test("a lock older than 30 s is broken", async () => {
    mkdirSync(credentialsDir(), { recursive: true });
    const lock = join(credentialsDir(), "credentials.lock");
    writeFileSync(lock, "a process that died");
    const old = new Date(Date.now() - 31_000);
    utimesSync(lock, old, old);
    const start = Date.now();
    assert.equal(await withCredentialsLock(async () => "ran"), "ran");
    assert.ok(Date.now() - start < 5_000);
  });
});

describe("refreshing under the lock", () => {
  test("a session another process already rotated is taken without calling the API", async () => {
    const api = await closedUrl();
    await writeCredentials({ current: api, sessions: { [api]: session("rotated-by-another") } });
    assert.equal((await refreshSession(api, session("mine", 1_000))).token, "rotated-by-another");
  });

  test("no session left: the session has ended; an unreachable API: cannot reach it", async () => {
    const api = await closedUrl();
    await assert.rejects(refreshSession(api, session("mine")), { message: `your session has ended: run platform-api login --api-url ${api}` });
    await writeCredentials({ sessions: { [api]: session("mine", 1_000) } });
    await assert.rejects(refreshSession(api, session("mine", 1_000)), (e) => e instanceof CommandError && e.message.startsWith(`cannot reach ${api}: ECONNREFUSED`));
    assert.equal((await readCredentials()).sessions[api].token, "mine", "the stored session is left as it was");
  });
});

describe("which API a command talks to", () => {
  test("--api-url, else PLATFORM_API_URL, else the last signed into, else the default", async () => {
    assert.equal(await apiUrlOf(undefined), DEFAULT_API_URL);
    await writeCredentials({ current: "https://last.example", sessions: {} });
    assert.equal(await apiUrlOf(parse([], apiUrlOption)["api-url"]), "https://last.example");
    process.env.PLATFORM_API_URL = "https://env.example/";
    assert.equal(await apiUrlOf(parse([], apiUrlOption)["api-url"]), "https://env.example");
    assert.equal(await apiUrlOf(parse(["--api-url", "http://flag.example:8080/"], apiUrlOption)["api-url"]), "http://flag.example:8080");
  });

  test("a URL that is not http(s) is a usage error", async () => {
    for (const bad of ["ftp://x", "not a url", "http://x/?q=1"]) await assert.rejects(apiUrlOf(bad), UsageError, bad);
  });
});
