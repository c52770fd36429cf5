import assert from "node:assert/strict";
import { execFile, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import http from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { promisify } from "node:util";
import { startOidcIssuer, type OidcIssuer } from "../support/oidc-issuer.js";
import { BIN } from "../support/repo.js";

/** The operator's settings on `serve`, through the real command line: --org-creation and the issuer allowances. */

const execFileAsync = promisify(execFile);
const dir = mkdtempSync(join(tmpdir(), "platform-api-flags-"));
const db = join(dir, "platform.db");
const API_URL = "http://platform.example";
const SUBJECT = "repo:acme/app:ref:refs/heads/main";
let issuer: OidcIssuer;

before(async () => {
  issuer = await startOidcIssuer();
});
after(async () => {
  await issuer.close();
  rmSync(dir, { recursive: true, force: true });
});

const cli = (args: string[], env: Record<string, string> = {}) =>
  execFileAsync(process.execPath, [BIN, ...args], { encoding: "utf8", env: { ...process.env, DATABASE_URL: "", METRICS_PORT: "0", ...env } });

/** Runs `serve` on free ports over `db` with `args`; `use` gets the API's base URL; the server is stopped after. */
async function withServe(args: string[], env: Record<string, string>, use: (api: string) => Promise<void>): Promise<void> {
  const child = spawn(process.execPath, [BIN, "serve", "--port", "0", "--registry-port", "0", "--db", db, "--api-url", API_URL, "--log-level", "warn", ...args], {
    stdio: ["ignore", "pipe", "pipe"],
    env: { ...process.env, DATABASE_URL: "", METRICS_PORT: "0", ...env },
  });
  const exited = new Promise((resolve) => child.on("exit", resolve));
  try {
    const api = await new Promise<string>((resolve, reject) => {
      let err = "";
      child.stderr.on("data", (chunk: Buffer) => {
        err += chunk.toString();
        const match = /API on (http:\/\/\S+),/.exec(err);
        if (match) resolve(match[1]);
      });
      child.on("exit", () => reject(new Error(`serve exited: ${err}`)));
    });
    await use(api);
  } finally {
    child.kill("SIGTERM");
    await exited;
  }
}

/** One request on its own connection (no keep-alive, so the server stops at once). */
function call(url: string, token: string, body?: object): Promise<{ status: number; body: Record<string, unknown> }> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = { authorization: `Bearer ${token}`, ...(body ? { "content-type": "application/json" } : {}) };
    const req = http.request(url, { method: "POST", agent: false, headers }, (res) => {
      let text = "";
      res.on("data", (chunk: Buffer) => (text += chunk.toString()));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) as Record<string, unknown> }));
    });
    req.on("error", reject);
    req.end(body ? JSON.stringify(body) : undefined);
  });
}

test("bad values of the new flags are usage errors (exit 2), and --help lists them", async () => {
  const refused = (args: string[], env: Record<string, string>, message: RegExp) =>
    assert.rejects(cli(["serve", "--db", ":memory:", ...args], env), (e: { code: number; stderr: string }) => e.code === 2 && message.test(e.stderr));
  const [help] = await Promise.all([
    cli(["serve", "--help"]).then((r) => r.stdout),
    refused(["--org-creation", "everyone"], {}, /--org-creation must be bootstrap or anyone/),
    refused([], { ALLOW_PRIVATE_ISSUERS: "maybe" }, /--allow-private-issuers: "maybe" is not true or false/),
    refused(["--scan-threads", "0"], {}, /--scan-threads: must be more than 0/),
    refused(["--upstream-timeout", "soon"], {}, /--upstream-timeout: "soon" is not a duration/),
    refused(["--scan-thread-memory", "8MiB"], {}, /--scan-thread-memory: at least 16MiB/),
    refused([], { SCAN_CPU_BUDGET: "soon" }, /--scan-cpu-budget: "soon" is not a duration/),
  ]);
  for (const name of ["--org-creation", "--allow-http-issuers", "--allow-private-issuers", "--scan-threads", "--scan-thread-memory", "--scan-cpu-budget", "--allow-http-upstreams", "--allow-private-upstreams", "--upstream-timeout"]) assert.ok(help.includes(name), name);
});

test("serve --org-creation anyone --allow-http-issuers with ALLOW_PRIVATE_ISSUERS=true: organizations over the API, a loopback issuer exchanged (both refused by default: see the other files here)", async () => {
  const boot = JSON.parse((await cli(["bootstrap", "--org", "flags-org", "--db", db, "--api-url", API_URL])).stdout) as { organization: { uid: string }; token: string };
  await withServe(["--org-creation", "anyone", "--allow-http-issuers"], { ALLOW_PRIVATE_ISSUERS: "true" }, async (api) => {
    const org = await call(`${api}/iam/v2/groups`, boot.token, { name: "second-org" });
    assert.equal(org.status, 200, JSON.stringify(org.body));
    const identity = await call(`${api}/iam/v2/identities/${boot.organization.uid}`, boot.token, { name: "ci", claimMatch: { issuer: issuer.url, subject: SUBJECT } });
    assert.equal(identity.status, 200, JSON.stringify(identity.body));
    const exchanged = await call(`${api}/sts/exchange?identity=${encodeURIComponent(identity.body.uid as string)}`, await issuer.issue({ sub: SUBJECT }));
    assert.equal(exchanged.status, 200, JSON.stringify(exchanged.body));
    assert.ok(exchanged.body.token);
  });
});
