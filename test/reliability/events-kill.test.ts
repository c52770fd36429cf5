import assert from "node:assert/strict";
import { execFile, spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { promisify } from "node:util";
import { BIN } from "../support/repo.js";

/** kill -9 of `serve` with undelivered events loses none: the next `serve` on the same store delivers them all. */

const execFileAsync = promisify(execFile);
const API_URL = "http://platform.example";
const env = { ...process.env, DATABASE_URL: "", METRICS_PORT: "0" };

function serve(db: string, args: string[] = []): { child: ChildProcess; api: Promise<string>; exited: Promise<unknown> } {
  const child = spawn(
    process.execPath,
    [BIN, "serve", "--port", "0", "--registry-port", "0", "--db", db, "--api-url", API_URL, "--log-level", "warn", "--events-allow-local-sinks", ...args],
    { stdio: ["ignore", "ignore", "pipe"], env },
  );
  const exited = new Promise((resolve) => child.on("exit", resolve));
  const api = new Promise<string>((resolve, reject) => {
    let err = "";
    child.stderr!.on("data", (chunk: Buffer) => {
      err += chunk.toString();
      const match = /API on (http:\/\/\S+),/.exec(err);
      if (match) resolve(match[1]);
    });
    child.on("exit", () => reject(new Error(`serve exited: ${err}`)));
  });
  return { child, api, exited };
}

async function post(url: string, token: string, body: object): Promise<Record<string, unknown>> {
  const res = await fetch(url, { method: "POST", headers: { authorization: `Bearer ${token}`, "content-type": "application/json" }, body: JSON.stringify(body) });
  const json = (await res.json()) as Record<string, unknown>;
  assert.equal(res.status, 200, JSON.stringify(json));
  return json;
}

async function waitFor(condition: () => boolean, what: string, ms: number): Promise<void> {
  const end = Date.now() + ms;
  while (!condition()) {
    if (Date.now() > end) assert.fail(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

test("serve killed with -9 in the middle of a backlog: after it starts again every event arrives", { timeout: 120_000 }, async () => {
  const dir = mkdtempSync(join(tmpdir(), "platform-api-events-kill-"));
  const db = join(dir, "platform.db");
  let healthy = false;
  let calls = 0;
  const delivered = new Map<string, string>();
  const receiver = http.createServer((req, res) => {
    calls++;
    req.resume();
    req.on("end", () => {
      if (healthy) delivered.set(String(req.headers["ce-id"]), String(req.headers["ce-subject"]));
      res.writeHead(healthy ? 200 : 500).end();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve));
  const sink = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
  try {
    const { stdout } = await execFileAsync(process.execPath, [BIN, "bootstrap", "--org", "acme", "--db", db, "--api-url", API_URL], { encoding: "utf8", env });
    const { organization, token } = JSON.parse(stdout) as { organization: { uid: string }; token: string };

    const first = serve(db);
    const api = await first.api;
    await post(`${api}/events/v2/subscriptions/${organization.uid}`, token, { sink });
    const repos: string[] = [];
    for (let i = 0; i < 20; i++) repos.push((await post(`${api}/registry/v2/repos/${organization.uid}`, token, { name: `kill/app${i}` })).uid as string);
    await waitFor(() => calls > 0, "a first (failed) attempt", 10_000);
    first.child.kill("SIGKILL");
    await first.exited;

    healthy = true;
    const second = serve(db);
    try {
      await second.api;
      // The first serve may have backed off for a while already (1 s, doubling): under load that can be most of a minute.
      await waitFor(() => repos.every((uid) => [...delivered.values()].includes(uid)), "every repo's event after the restart", 60_000);
      assert.equal(delivered.size, 21, "the subscription's and the 20 repos' events");
    } finally {
      second.child.kill("SIGTERM");
      await second.exited;
    }
  } finally {
    await new Promise<void>((resolve) => receiver.close(() => resolve()));
    rmSync(dir, { recursive: true, force: true });
  }
});

test("serve --events-retry-period: a delivery the sink refuses past it is marked failed, and shows so", { timeout: 60_000 }, async () => {
  const dir = mkdtempSync(join(tmpdir(), "platform-api-events-retry-"));
  const db = join(dir, "platform.db");
  let calls = 0;
  const receiver = http.createServer((req, res) => {
    calls++;
    req.resume();
    req.on("end", () => res.writeHead(503).end());
  });
  await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve));
  const sink = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
  try {
    const { stdout } = await execFileAsync(process.execPath, [BIN, "bootstrap", "--org", "acme", "--db", db, "--api-url", API_URL], { encoding: "utf8", env });
    const { organization, token } = JSON.parse(stdout) as { organization: { uid: string }; token: string };
    const server = serve(db, ["--events-retry-period", "2s"]);
    try {
      const api = await server.api;
      const sub = await post(`${api}/events/v2/subscriptions/${organization.uid}`, token, { sink });
      const delivery = async () =>
        ((await (await fetch(`${api}/events/v2/subscriptions/${sub.uid as string}`, { headers: { authorization: `Bearer ${token}` } })).json()) as { delivery: Record<string, unknown> })
          .delivery;
      const end = Date.now() + 30_000;
      while ((await delivery()).failedCount !== "1") {
        if (Date.now() > end) assert.fail(`not marked failed: ${JSON.stringify(await delivery())}`);
        await new Promise((r) => setTimeout(r, 200));
      }
      const final = await delivery();
      assert.equal(final.pendingCount ?? "0", "0");
      assert.equal(final.lastFailureStatus, 503);
      assert.ok(calls >= 2, `retried before giving up (${calls} attempts)`);
      const before = calls;
      await new Promise((r) => setTimeout(r, 1_500));
      assert.equal(calls, before, "not retried after it was marked failed");
    } finally {
      server.child.kill("SIGTERM");
      await server.exited;
    }
  } finally {
    await new Promise<void>((resolve) => receiver.close(() => resolve()));
    rmSync(dir, { recursive: true, force: true });
  }
});
