import assert from "node:assert/strict";
import { execFileSync, spawn } from "node:child_process";
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { createServer, type AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { test } from "node:test";

/**
 * The README runs as written: its shell blocks, in order, in one clean bash, in a copy of the
 * project's files (node_modules and dist/ linked, as `npm install` would have made them). The
 * first block's `npm install && npm start` starts the server in the background (on ports of the
 * test's own: `localhost:8080` and `localhost:5000` in the blocks name them) and waits until it
 * answers; its `npm test` is this suite. `curl` fails on an HTTP error unless the line shows the
 * status itself (`-w`); any command failing fails the block. A block the test cannot run here is
 * marked `<!-- readme-test: skip <why> -->` on the line before it: each is listed in the output.
 */

const ROOT = new URL("../..", import.meta.url).pathname;

interface Block {
  index: number;
  line: number;
  heading: string;
  text: string;
  skip?: string;
}

function blocksOf(markdown: string): Block[] {
  const lines = markdown.split("\n");
  const blocks: Block[] = [];
  let heading = "";
  for (let i = 0; i < lines.length; i++) {
    if (lines[i].startsWith("## ")) heading = lines[i].slice(3);
    if (lines[i] !== "```sh") continue;
    const end = lines.indexOf("```", i + 1);
    const skip = /^<!-- readme-test: skip (.+) -->$/.exec(lines[i - 1] ?? "")?.[1];
    blocks.push({ index: blocks.length + 1, line: i + 1, heading, text: lines.slice(i + 1, end).join("\n"), skip });
    i = end;
  }
  return blocks;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once("error", reject);
    probe.listen(0, "127.0.0.1", () => {
      const { port } = probe.address() as AddressInfo;
      probe.close(() => resolve(port));
    });
  });
}

/** The block as the test's shell runs it: its own ports, the server started in the background. */
function runnable(block: Block, ports: { api: number; registry: number; metrics: number }): string {
  const text = block.text
    .replace(/^npm install && npm start\b.*$/m, "npm start > server.log 2>&1 &\nwait_until_up")
    .replace(/^npm test\b.*$/m, "")
    .replaceAll("localhost:8080", `localhost:${ports.api}`)
    .replaceAll("localhost:5000", `localhost:${ports.registry}`)
    .replaceAll("localhost:9464", `localhost:${ports.metrics}`);
  return `echo "::block ${block.index} (README line ${block.line})"\n${text}\n`;
}

test("the README's shell blocks run as written, in order, in one shell", { timeout: 300_000 }, async (t) => {
  const blocks = blocksOf(readFileSync(join(ROOT, "README.md"), "utf8"));
  assert.ok(blocks.length > 10);
  const clone = mkdtempSync(join(tmpdir(), "platform-api-readme-"));
  const files = execFileSync("git", ["ls-files", "-z", "--cached", "--others", "--exclude-standard"], { cwd: ROOT, encoding: "utf8" }).split("\0").filter(Boolean);
  for (const file of files) {
    try {
      mkdirSync(dirname(join(clone, file)), { recursive: true });
      cpSync(join(ROOT, file), join(clone, file));
    } catch {
      // A file deleted in the working tree but still in the index.
    }
  }
  symlinkSync(join(ROOT, "node_modules"), join(clone, "node_modules"));
  symlinkSync(join(ROOT, "dist"), join(clone, "dist"));
  const ports = { api: await freePort(), registry: await freePort(), metrics: await freePort() };
  const prelude = `set -eo pipefail
curl() { case " $* " in *" -w "*|*" --write-out "*) command curl "$@" ;; *) command curl --fail-with-body "$@" ;; esac; }
wait_until_up() { for _ in $(seq 1 600); do command curl -sf localhost:$PORT/readyz >/dev/null && return 0; sleep 0.1; done; cat server.log; return 1; }
`;
  const script = prelude + blocks.filter((b) => !b.skip).map((b) => runnable(b, ports)).join("") + 'echo "::done"\n';
  writeFileSync(join(clone, "readme.sh"), script);
  for (const skipped of blocks.filter((b) => b.skip)) t.diagnostic(`block ${skipped.index} (line ${skipped.line}, ${skipped.heading}) not run: ${skipped.skip}`);

  const shell = spawn("bash", ["readme.sh"], {
    cwd: clone,
    // The URLs the server and the CLI default to on the README's ports, here on the test's.
    env: {
      PATH: process.env.PATH,
      HOME: clone,
      TERM: "dumb",
      PORT: String(ports.api),
      REGISTRY_PORT: String(ports.registry),
      METRICS_PORT: String(ports.metrics),
      API_URL: `http://localhost:${ports.api}`,
      REGISTRY_URL: `http://localhost:${ports.registry}`,
    },
    stdio: ["ignore", "pipe", "pipe"],
    detached: true,
  });
  let output = "";
  shell.stdout.on("data", (chunk: Buffer) => (output += chunk.toString()));
  shell.stderr.on("data", (chunk: Buffer) => (output += chunk.toString()));
  const code = await new Promise<number | null>((resolve) => shell.on("exit", resolve));
  try {
    process.kill(-shell.pid!, "SIGTERM");
  } catch {
    // The group is gone already.
  }
  // The server started by the first block: stopped by its npm's group above, or by its port.
  await new Promise((resolve) => setTimeout(resolve, 500));
  rmSync(clone, { recursive: true, force: true });
  const last = [...output.matchAll(/::block (\d+) \(README line (\d+)\)/g)].at(-1);
  assert.ok(code === 0 && output.includes("::done"), `README block ${last?.[1]} (line ${last?.[2]}) failed (exit ${code}):\n${output.slice(-4000)}`);
});
