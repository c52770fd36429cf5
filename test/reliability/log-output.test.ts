import assert from "node:assert/strict";
import { spawn, type ChildProcess } from "node:child_process";
import { closeSync, mkdtempSync, openSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, test } from "node:test";
import { bootstrapChild } from "../support/child-server.js";
import { BIN } from "../support/repo.js";
import { freePort } from "../support/test-server.js";

/**
 * The server's log output failing never ends it: with standard output on a full disk (`/dev/full`
 * answers every write ENOSPC, as a file on a full disk does) or on a pipe whose reader went away
 * (`serve | head -c 20000`: EPIPE), the server keeps answering, and the lines it could not write
 * are counted in `log_lines_dropped_total`.
 */

const dir = mkdtempSync(join(tmpdir(), "platform-api-log-output-"));
after(() => rmSync(dir, { recursive: true, force: true }));

interface Serving {
  child: ChildProcess;
  apiUrl: string;
  metricsUrl: string;
  stop(): Promise<void>;
}

/** `serve` at log level debug, its standard output `stdout`; its ports chosen here (what it logs may never be read). */
async function serve(name: string, stdout: number | "pipe"): Promise<Serving> {
  const db = join(dir, `${name}.db`);
  await bootstrapChild(db, "acme");
  const [port, registryPort, metricsPort] = [await freePort(), await freePort(), await freePort()];
  const child = spawn(
    process.execPath,
    [BIN, "serve", "--host", "127.0.0.1", "--port", String(port), "--registry-port", String(registryPort), "--metrics-port", String(metricsPort), "--db", db, "--registry-dir", join(dir, `${name}-registry`), "--log-level", "debug"],
    { stdio: ["ignore", stdout, "pipe"], env: { ...process.env, DATABASE_URL: "", PORT: "", API_URL: "", METRICS_PORT: "" } },
  );
  let err = "";
  child.stderr!.on("data", (chunk: Buffer) => (err += chunk.toString()));
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  await new Promise<void>((resolve, reject) => {
    const onData = () => /API on /.test(err) && resolve();
    child.stderr!.on("data", onData);
    void exited.then(() => reject(new Error(`serve exited before listening: ${err}`)));
  });
  return {
    child,
    apiUrl: `http://127.0.0.1:${port}`,
    metricsUrl: `http://127.0.0.1:${metricsPort}/metrics`,
    async stop() {
      child.kill("SIGKILL");
      await exited;
    },
  };
}

/** Calls that each log a line or more, then a scrape; the counter's value. */
async function callsAndDrops(server: Serving, calls: number): Promise<number> {
  for (let i = 0; i < calls; i++) {
    const res = await fetch(`${server.apiUrl}/ping/v2/ping`);
    assert.equal(res.status, 200, `call ${i}`);
    await res.arrayBuffer();
  }
  const text = await (await fetch(server.metricsUrl)).text();
  const line = text.split("\n").find((l) => l.startsWith("log_lines_dropped_total "));
  assert.ok(line, "log_lines_dropped_total is exported");
  return Number(line.split(" ")[1]);
}

describe("log output that fails", () => {
  test("standard output on a full disk: the server keeps answering, the lines are dropped and counted", { timeout: 60_000 }, async () => {
    const full = openSync("/dev/full", "w");
    const server = await serve("full", full);
    closeSync(full);
    try {
      const dropped = await callsAndDrops(server, 50);
      assert.ok(dropped >= 50, `${dropped} lines counted as dropped`);
      assert.equal(server.child.exitCode, null);
    } finally {
      await server.stop();
    }
  });

  test("standard output on a pipe whose reader went away: the server keeps answering, the lines are dropped and counted", { timeout: 60_000 }, async () => {
    const server = await serve("pipe", "pipe");
    try {
      // As `| head -c 20000`: read some, then close the pipe's reading end.
      let read = 0;
      await new Promise<void>((resolve) => {
        server.child.stdout!.on("data", (chunk: Buffer) => {
          read += chunk.length;
          if (read >= 200) resolve();
        });
        void callsAndDrops(server, 1).catch(() => {});
      });
      server.child.stdout!.destroy();
      const dropped = await callsAndDrops(server, 50);
      assert.ok(dropped >= 1, `${dropped} lines counted as dropped`);
      assert.equal(server.child.exitCode, null);
      assert.equal(await callsAndDrops(server, 5) >= dropped, true);
    } finally {
      await server.stop();
    }
  });
});
