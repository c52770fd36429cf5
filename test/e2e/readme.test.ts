import assert from "node:assert/strict";
import { execFileSync, spawn } from "node:child_process";
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { test, type TestContext } from "node:test";
import { dropFresh, testDatabases } from "../support/databases.js";
import { skopeoSkip } from "../support/skopeo.js";
import { freePort } from "../support/test-server.js";
import { withTestPorts } from "../support/readme-ports.js";
import { ROOT } from "../support/repo.js";

/**
 * The README runs as written: its shell blocks, in order, in one clean bash, in a copy of the
 * project's files (node_modules linked and dist/ copied, as `npm install` would have made them). The
 * first block's `npm install && npm start` starts the server in the background (on ports of the
 * test's own: `localhost:8080` and `localhost:5000` in the blocks name them) and waits until it
 * answers; its `npm test` is this suite. `curl` fails on an HTTP error unless the line shows the
 * status itself (`-w`) or says what to do on one (`-f`); any command failing fails the block. A block the test cannot run here is
 * marked `<!-- readme-test: skip <why> -->` on the line before it: each is listed in the output.
 * `<!-- readme-test: stop-server -->` stands for the prose's "stop the server (Ctrl-C)": the
 * shell's server is stopped before the block, which starts another. KEEP_README_CLONE=1 keeps the
 * copy (its readme.sh, server.log, audit.log) for a look after a failure. Every server the README
 * starts appends to one audit log (`AUDIT_LOG`): each of its lines must name its actor. What the
 * blocks write in the project (tokens, passwords, keys, layouts) must be ignored by its .gitignore:
 * the shell's HOME is a folder of its own, so what lands in the copy is the walk's. The test adds no
 * wait: what a block reads after something asynchronous (a report made after a push, the events a
 * receiver is sent) must be there at machine pace, so a block waits for what it starts in the
 * background (an `until` loop) and for what it reads (a poll the README shows).
 */

/** The PostgreSQL database the README's replicas use; the test gives them a fresh schema in it. */
const README_POSTGRES = "postgres://postgres@127.0.0.1:5432/test";

interface Block {
  index: number;
  line: number;
  heading: string;
  text: string;
  skip?: string;
  /** The prose before it says to stop the server first (Ctrl-C in its terminal): the block starts another. */
  stopsServer: boolean;
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
    const stopsServer = lines[i - 1] === "<!-- readme-test: stop-server -->";
    blocks.push({ index: blocks.length + 1, line: i + 1, heading, text: lines.slice(i + 1, end).join("\n"), skip, stopsServer });
    i = end;
  }
  return blocks;
}

/** A command (continued lines joined, its comment left out) that starts a process in the background. */
const BACKGROUND = /(^|[^&])&$/;

/**
 * The commands of a block that start a process in the background (`... &`) with no `until` loop
 * after them: the block would go on before what they start listens (or writes what the next line
 * reads), which a person typing never sees and a script always may. Consecutive starts share the
 * loop after them.
 */
function unwaitedStarts(text: string): string[] {
  const commands = text
    .replace(/\\\n/g, " ")
    .split("\n")
    .map((line) => line.replace(/(^|\s)#.*$/, "").trim())
    .filter((line) => line !== "");
  const unwaited: string[] = [];
  for (let i = 0; i < commands.length; i++) {
    if (!BACKGROUND.test(commands[i])) continue;
    let next = i + 1;
    while (next < commands.length && BACKGROUND.test(commands[next])) next++;
    if (!commands[next]?.startsWith("until ")) unwaited.push(...commands.slice(i, next));
    i = next - 1;
  }
  return unwaited;
}

/** The ports the README names, by what listens there: the test gives each one of its own. */
const README_PORTS = {
  api: 8080,
  registry: 5000,
  metrics: 9464,
  receiver: 9999,
  idp: 9000,
  s3: 4568,
  replica1: 8181,
  replica1Registry: 5181,
  replica2: 8182,
  replica2Registry: 5182,
} as const;

type Ports = Record<keyof typeof README_PORTS, number>;

/**
 * The block as the test's shell runs it: the ports of the test (8080, 5000, 9464, the event
 * receiver's 9999 and the local identity provider's 9000 in the text name them), the first
 * server started in the background, and the server of the shell remembered (SERVER_PID) so that a
 * block whose prose says to stop it first finds it stopped.
 */
function runnable(block: Block, ports: Ports, postgresUrl: string): string {
  let text = block.text
    .replace(/^npm install && npm start\b.*$/m, "npm start > server.log 2>&1 &\nSERVER_PID=$!\nwait_until_up")
    .replace(/^npm test\b.*$/m, "")
    .replace(/^(npm start\b.*&)(\s*#.*)?$/gm, "$1\nSERVER_PID=$!");
  text = withTestPorts(text, new Map(Object.entries(README_PORTS).map(([name, port]) => [port, ports[name as keyof Ports]])));
  // The PostgreSQL database the README names: a schema of the test's own in it.
  text = text.replaceAll(README_POSTGRES, postgresUrl);
  const stop = block.stopsServer ? 'kill "$SERVER_PID"; wait "$SERVER_PID" 2>/dev/null || true\n' : "";
  return `echo "::block ${block.index} (line ${block.line})"\n${stop}${text}\n`;
}

// The README pushes and pulls with skopeo: without it (and without REQUIRE_SKOPEO=1, which .ci/run sets) the test says so and skips.
test("the README's shell blocks run as written, in order, in one shell; what follows a push is there at machine pace; every audit line names its actor", { timeout: 300_000, skip: skopeoSkip }, async (t) => {
  const walk = await runShellBlocks(t, "README.md", 10);
  // A report is made after the push, off its path: the block reads it, and what moving the tag resolved, once they are made.
  const reports = walk.outputOf("/vulnerabilityReport");
  assert.doesNotMatch(reports, /STATUS_PENDING/, `the report the block reads after the push is made:\n${reports}`);
  assert.match(reports, /"status":"STATUS_DONE"/);
  assert.match(reports, /"resolvedVulnsReports":\[\{[^\n]*"repoName":"shop","tag":"latest"/, `what the move of shop:latest resolved is listed after the push:\n${reports}`);
  // The receiver listens before the subscription exists, so no delivery to it fails (a failure stays on the subscription), and it verifies every event.
  const events = walk.outputOf("examples/event-receiver.mjs");
  assert.match(events, /"subscriptions":\[\{/, "the block lists the subscription");
  assert.doesNotMatch(events, /"lastFailureTime"/, `no delivery to the receiver failed:\n${events}`);
  const received = walk.outputOf("examples/event-receiver.mjs", { onwards: true });
  assert.match(received, /verified dev\.platform\.api\.platform\.registry\.tag\.created\.v1 [^\n]*"name":"v2"/, "the receiver verified the pushed tag's event");
  assert.match(received, /verified dev\.platform\.registry\.push\.v1 /, "the receiver verified the push's event");
  assert.doesNotMatch(received, /REJECTED/);
  const lines = walk.audit.split("\n").filter(Boolean).map((line) => JSON.parse(line) as { host: string; action: string; actor?: { subject?: string } });
  assert.ok(lines.some((l) => l.host === "api") && lines.some((l) => l.host === "registry"), "the walk changes things on both hosts");
  assert.ok(lines.some((l) => l.action === "registry.manifest.put") && lines.some((l) => l.action === "registry.pull_token.use"), "a push and a pull token's use are audited");
  for (const line of lines) assert.ok(typeof line.actor?.subject === "string" && line.actor.subject !== "" && line.actor.subject !== "anonymous", `an actor in ${JSON.stringify(line)}`);
});

test("docs/operations.md's shell blocks run as written, in order, in one shell", { timeout: 300_000 }, async (t) => void (await runShellBlocks(t, "docs/operations.md", 2)));

test("what a block starts in the background it waits for (an until loop) before going on", () => {
  for (const document of ["README.md", "docs/operations.md"]) {
    for (const block of blocksOf(readFileSync(join(ROOT, document), "utf8"))) {
      assert.deepEqual(unwaitedStarts(block.text), [], `${document} block ${block.index} (line ${block.line}, ${block.heading}) starts these and goes on without waiting for them`);
    }
  }
});

/**
 * The files under `folder` that git would offer to commit (neither ignored by the project's
 * .gitignore nor among `known`), by their top-level entry: `owner.json`, `my-layout/`.
 */
function untrackedOf(folder: string, known: ReadonlySet<string>): string[] {
  execFileSync("git", ["init", "-q"], { cwd: folder });
  const others = execFileSync("git", ["ls-files", "-z", "--others", "--exclude-standard"], { cwd: folder, encoding: "utf8" }).split("\0").filter(Boolean);
  return [...new Set(others.filter((file) => !known.has(file)).map((file) => (file.includes("/") ? `${file.slice(0, file.indexOf("/"))}/` : file)))].sort();
}

interface Walk {
  /** The audit log of the servers the blocks started. */
  audit: string;
  /**
   * What the shell printed while the one block whose text includes `command` ran (background
   * processes' lines among it), or from its start to the end of the walk with `onwards`.
   */
  outputOf(command: string, options?: { onwards?: boolean }): string;
}

/** Runs the blocks; fails when one fails or when they leave files git would commit. */
async function runShellBlocks(t: TestContext, document: string, atLeast: number): Promise<Walk> {
  const blocks = blocksOf(readFileSync(join(ROOT, document), "utf8"));
  assert.ok(blocks.length >= atLeast, `${document} has its blocks`);
  const clone = mkdtempSync(join(tmpdir(), "platform-api-readme-"));
  const home = mkdtempSync(join(tmpdir(), "platform-api-readme-home-"));
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
  // A copy, not a link: nothing the blocks run may rewrite the build other tests are running.
  cpSync(join(ROOT, "dist"), join(clone, "dist"), { recursive: true });
  const ports = Object.fromEntries(
    await Promise.all(Object.keys(README_PORTS).map(async (name) => [name, await freePort()])),
  ) as Ports;
  const postgres = (await testDatabases()).find((d) => d.name === "postgres");
  if (postgres?.skip) {
    for (const block of blocks.filter((b) => b.text.includes(README_POSTGRES))) block.skip ??= postgres.skip;
  }
  const postgresUrl = postgres && !postgres.skip ? await postgres.fresh() : README_POSTGRES;
  const prelude = `set -eo pipefail
curl() { local a; for a in "$@"; do case "$a" in -w|--write-out|--fail|--fail-with-body|-[a-zA-Z]*f*) command curl "$@"; return;; esac; done; command curl --fail-with-body "$@"; }
wait_until_up() { for _ in $(seq 1 600); do command curl -sf localhost:$PORT/readyz >/dev/null && return 0; sleep 0.1; done; cat server.log; return 1; }
`;
  const script = prelude + blocks.filter((b) => !b.skip).map((b) => runnable(b, ports, postgresUrl)).join("") + 'echo "::done"\n';
  writeFileSync(join(clone, "readme.sh"), script);
  writeFileSync(join(clone, "browser.sh"), `#!/bin/sh\nexec node --import tsx ${join(ROOT, "test/support/login-walk-browser.ts")} "$1" >> browser.log 2>&1\n`, { mode: 0o755 });
  for (const skipped of blocks.filter((b) => b.skip)) t.diagnostic(`${document} block ${skipped.index} (line ${skipped.line}, ${skipped.heading}) not run: ${skipped.skip}`);

  const shell = spawn("bash", ["readme.sh"], {
    cwd: clone,
    // PORT, REGISTRY_PORT and METRICS_PORT: where `npm start` listens, and so the URLs it and the CLI default to.
    env: {
      PATH: process.env.PATH,
      HOME: home,
      TERM: "dumb",
      PORT: String(ports.api),
      REGISTRY_PORT: String(ports.registry),
      METRICS_PORT: String(ports.metrics),
      // The person at the browser `platform-api login` opens: test/support/login-walk-browser.ts signs in as ada.
      BROWSER: join(clone, "browser.sh"),
      LOGIN_WALK_USER: "ada",
      AUDIT_LOG: join(clone, "audit.log"),
    },
    stdio: ["ignore", "pipe", "pipe"],
    detached: true,
  });
  let output = "";
  shell.stdout.on("data", (chunk: Buffer) => (output += chunk.toString()));
  shell.stderr.on("data", (chunk: Buffer) => (output += chunk.toString()));
  // A block that never ends (a server that never comes up) is stopped with everything it started.
  const stuck = setTimeout(() => process.kill(-shell.pid!, "SIGKILL"), 240_000);
  const code = await new Promise<number | null>((resolve) => shell.on("exit", resolve));
  clearTimeout(stuck);
  try {
    process.kill(-shell.pid!, "SIGTERM");
  } catch {
    // The group is gone already.
  }
  // The server started by the first block: stopped by its npm's group above, or by its port.
  await new Promise((resolve) => setTimeout(resolve, 500));
  const audit = existsSync(join(clone, "audit.log")) ? readFileSync(join(clone, "audit.log"), "utf8") : "";
  const left = untrackedOf(clone, new Set([...files, "readme.sh", "browser.sh"]));
  if (!process.env.KEEP_README_CLONE) rmSync(clone, { recursive: true, force: true });
  rmSync(home, { recursive: true, force: true });
  if (postgresUrl !== README_POSTGRES) await dropFresh(postgresUrl);
  const last = [...output.matchAll(/::block (\d+) \(line (\d+)\)/g)].at(-1);
  assert.ok(code === 0 && output.includes("::done"), `${document} block ${last?.[1]} (line ${last?.[2]}) failed (exit ${code}):\n${output.slice(-4000)}`);
  assert.deepEqual(left, [], `${document}'s walk leaves files in the project that git would offer to commit: write them to a temporary folder or list them in .gitignore`);
  return {
    audit,
    outputOf(command, options = {}) {
      const showing = blocks.filter((b) => !b.skip && b.text.includes(command));
      assert.equal(showing.length, 1, `one block of ${document} runs ${command}`);
      const start = output.indexOf(`::block ${showing[0].index} (`);
      const end = options.onwards ? -1 : output.indexOf("::block ", start + 1);
      return output.slice(start, end < 0 ? undefined : end);
    },
  };
}
