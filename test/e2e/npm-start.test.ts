import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { ROOT } from "../support/repo.js";


/** Resolves when `check` holds, polling; rejects after `ms`. */
async function until(check: () => Promise<boolean>, ms: number, what: string): Promise<void> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (await check()) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`timed out waiting for ${what}`);
}

test("`npm start` serves, and signalling npm (the PID of `npm start &`) stops the server", async () => {
  const dir = mkdtempSync(join(tmpdir(), "platform-api-npm-start-"));
  const npm = spawn("npm", ["start", "--silent"], {
    cwd: ROOT,
    env: { ...process.env, PORT: "0", REGISTRY_PORT: "0", METRICS_PORT: "off", HOST: "127.0.0.1", DATABASE_URL: join(dir, "platform.db"), API_URL: "" },
    stdio: ["ignore", "ignore", "pipe"],
  });
  let stderr = "";
  npm.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  try {
    await until(async () => /API on (http:\/\/\S+),/.test(stderr), 60_000, "the banner");
    const api = /API on (http:\/\/\S+),/.exec(stderr)![1];
    assert.equal((await fetch(`${api}/healthz`)).status, 200);
    npm.kill("SIGTERM");
    await until(async () => fetch(`${api}/healthz`).then(() => false, () => true), 15_000, "the server to stop after npm was signalled");
  } finally {
    npm.kill("SIGKILL");
    rmSync(dir, { recursive: true, force: true });
  }
});
