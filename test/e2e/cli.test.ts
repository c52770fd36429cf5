import assert from "node:assert/strict";
import { execFile, spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import http from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, test } from "node:test";
import { promisify } from "node:util";
import type { JsonObject } from "@bufbuild/protobuf";
import { BIN } from "../support/repo.js";

const execFileAsync = promisify(execFile);
const dir = mkdtempSync(join(tmpdir(), "platform-api-cli-"));
const db = join(dir, "platform.db");
after(() => rmSync(dir, { recursive: true, force: true }));

const cli = (...args: string[]) => execFileAsync(process.execPath, [BIN, ...args], { encoding: "utf8", env: { ...process.env, DATABASE_URL: "" } });

/** Starts `serve` on free ports and resolves once it prints where it listens. */
async function serve(apiUrl: string): Promise<{ child: ChildProcess; api: string; exit: Promise<number | null> }> {
  const child = spawn(process.execPath, [BIN, "serve", "--port", "0", "--registry-port", "0", "--db", db, "--api-url", apiUrl, "--log-level", "warn"], {
    stdio: ["ignore", "pipe", "pipe"],
    // Any free port for the metrics listener: test files run in parallel.
    env: { ...process.env, METRICS_PORT: "0" },
  });
  const exit = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
  const api = await new Promise<string>((resolve, reject) => {
    let err = "";
    child.stderr!.on("data", (chunk: Buffer) => {
      err += chunk.toString();
      const match = /API on (http:\/\/\S+),/.exec(err);
      if (match) resolve(match[1]);
    });
    child.on("exit", () => reject(new Error(`serve exited: ${err}`)));
  });
  return { child, api, exit };
}

test("--help describes every command", async () => {
  assert.match((await cli("--help")).stdout, /serve[\s\S]*bootstrap[\s\S]*token/);
  for (const command of ["serve", "bootstrap", "token"]) {
    assert.match((await cli(command, "--help")).stdout, new RegExp(`Usage: platform-api ${command}`));
  }
  await assert.rejects(cli("bootstrap"), (e: { code: number; stderr: string }) => e.code === 2 && /--org is required/.test(e.stderr));
  await assert.rejects(cli("bootstrap", "--org", "Not Valid", "--db", db), (e: { code: number; stderr: string }) => e.code === 2 && /Invalid argument/.test(e.stderr));
});

test("bootstrap --output writes its file only on success; owners finds the owner again", async () => {
  const out = join(dir, "owner.json");
  await cli("bootstrap", "--org", "again-org", "--db", db, "--output", out);
  const first = readFileSync(out, "utf8");
  const boot = JSON.parse(first) as { organization: { uid: string }; identity: { uid: string }; token: string };
  assert.equal(statSync(out).mode & 0o777, 0o600, "the file holds a token: only its owner reads it");
  await assert.rejects(cli("bootstrap", "--org", "again-org", "--db", db, "--output", out), (e: { code: number }) => e.code === 2);
  assert.equal(readFileSync(out, "utf8"), first, "a bootstrap that failed left the file as it was");
  const found = JSON.parse((await cli("owners", "--org", "again-org", "--db", db)).stdout) as { organization: { uid: string }; owners: Array<{ uid: string }> };
  assert.equal(found.organization.uid, boot.organization.uid);
  assert.deepEqual(found.owners.map((o) => o.uid), [boot.identity.uid]);
  assert.ok((await cli("token", "--identity", found.owners[0].uid, "--db", db)).stdout.trim().split(".").length === 3, "a token for the owner, again");
  await assert.rejects(cli("owners", "--org", "nobody", "--db", db), (e: { code: number; stderr: string }) => e.code === 2 && /no organization is named "nobody"/.test(e.stderr));
});

test("bootstrap, token, serve, and a clean SIGTERM that loses nothing acknowledged", async () => {
  const apiUrl = "http://platform.example";
  const boot = JSON.parse((await cli("bootstrap", "--org", "cli-org", "--db", db, "--api-url", apiUrl)).stdout) as {
    organization: { uid: string; name: string };
    identity: { uid: string };
    token: string;
  };
  assert.equal(boot.organization.name, "cli-org");
  assert.match(boot.identity.uid, new RegExp(`^${boot.organization.uid}/[0-9a-f]{16}$`));

  const token = (await cli("token", "--identity", boot.identity.uid, "--db", db, "--api-url", apiUrl, "--ttl", "10m")).stdout.trim();
  await assert.rejects(cli("token", "--identity", boot.identity.uid, "--db", db, "--ttl", "2h"), (e: { code: number }) => e.code === 2);

  const server = await serve(apiUrl);
  const agent = new http.Agent({ keepAlive: true, maxSockets: 8 });
  const post = (name: string) =>
    new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = http.request(
        `${server.api}/iam/v2/groups/${boot.organization.uid}`,
        { method: "POST", agent, headers: { authorization: `Bearer ${token}`, "content-type": "application/json" } },
        (res) => {
          let body = "";
          res.on("data", (c: Buffer) => (body += c.toString()));
          res.on("end", () => resolve({ status: res.statusCode ?? 0, body }));
        },
      );
      req.on("error", reject);
      req.end(JSON.stringify({ name }));
    });

  assert.equal((await post("warm-up")).status, 200);
  const burst = Array.from({ length: 40 }, (_, i) => post(`burst-${i}`).catch((error: Error) => ({ status: -1, body: error.message })));
  await new Promise((r) => setTimeout(r, 5));
  server.child.kill("SIGTERM");
  const results = await Promise.all(burst);
  assert.equal(await server.exit, 0, "SIGTERM exits 0");
  agent.destroy();
  assert.ok(results.every((r) => r.status === 200 || r.status === -1), JSON.stringify(results.filter((r) => r.status !== 200 && r.status !== -1)));
  const acknowledged = results.filter((r) => r.status === 200).map((r) => (JSON.parse(r.body) as JsonObject).name as string);
  assert.ok(acknowledged.length > 0, "calls in flight when SIGTERM arrived are finished, not dropped");

  const again = await serve(apiUrl);
  const list = await fetch(`${again.api}/iam/v2/groups?uidp.children_of=${boot.organization.uid}&page_size=200`, {
    headers: { authorization: `Bearer ${token}` },
  });
  const names = ((await list.json()) as { groups: JsonObject[] }).groups.map((g) => g.name as string);
  for (const name of acknowledged) assert.ok(names.includes(name), `${name} was acknowledged but is gone`);
  again.child.kill("SIGTERM");
  assert.equal(await again.exit, 0);
});

test("serve refuses a bad --metrics-port or --cors-origins in one line, before opening anything", async () => {
  for (const [flag, value, message] of [
    ["--metrics-port", "abc", /--metrics-port: "abc" is not a port number \(0 to 65535\) or off \(see "platform-api serve --help"\)/],
    ["--cors-origins", "https://app.example.com/", /--cors-origins: "https:\/\/app.example.com\/" is not an origin like https:\/\/app.example.com/],
  ] as const) {
    const failed = await cli("serve", "--db", join(dir, "never.db"), flag, value).then(
      () => assert.fail("serve started"),
      (error: { code: number; stderr: string }) => error,
    );
    assert.equal(failed.code, 2);
    assert.match(failed.stderr.split("\n")[0], message);
    assert.doesNotMatch(failed.stderr, /\n\s+at /);
  }
});
