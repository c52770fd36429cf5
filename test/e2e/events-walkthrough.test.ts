import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { writeLayout } from "../support/oci-layout.js";
import { freePort, skopeoSkip } from "../support/skopeo.js";
import { withTestPorts } from "../support/readme-ports.js";
import { BIN, ROOT } from "../support/repo.js";

/**
 * The README's events walkthrough, run by bash as a user runs it: the README's lines verbatim
 * (`npm start` and `npx platform-api` are the built CLI, and the ports are free ones instead of
 * 8080, 5000 and 9999), after the lines of the sections before it that it continues (the
 * bootstrap, `AUTH`, the registry token and `CREDS`), in a fresh folder holding `./my-layout`;
 * no wait of the test's own. The receiver of `examples/event-receiver.mjs` must print the pushed
 * tag's event, verified, and no delivery to it may have failed (it listened before it was subscribed).
 */

const README = readFileSync(join(ROOT, "README.md"), "utf8");

/** The lines of the ```sh blocks of the README section `heading`. */
function block(heading: string): string[] {
  const start = README.indexOf(`${heading}\n`);
  assert.ok(start >= 0, `README has "${heading}"`);
  const next = README.indexOf("\n## ", start + heading.length);
  const section = README.slice(start, next < 0 ? undefined : next);
  const lines = [...section.matchAll(/```sh\n([\s\S]*?)```/g)].flatMap((m) => m[1].split("\n"));
  assert.ok(lines.length > 0, `a sh block in "${heading}"`);
  return lines.filter((l) => l.trim() !== "");
}
const line = (lines: string[], prefix: string) => {
  const found = lines.find((l) => l.startsWith(prefix));
  assert.ok(found, `a README line starts with ${prefix}`);
  return found;
};

test("README events: a receiver verifies the signed CloudEvent of a pushed tag", { skip: skopeoSkip, timeout: 180_000 }, async () => {
  const dir = mkdtempSync(join(tmpdir(), "platform-api-events-readme-"));
  const [api, registry, sink] = [await freePort(), await freePort(), await freePort()];
  writeLayout(join(dir, "my-layout"), { architectures: ["amd64"], ref: "v1" });
  symlinkSync(join(ROOT, "examples"), join(dir, "examples"));

  const first = block("## First steps");
  const identities = block("## Identities, roles and workload tokens");
  const repos = block("## Repos, tags and pinning an image by digest");
  const push = block("## Push and pull with a registry client");
  const events = block("## Events: signed CloudEvents to your webhook");
  assert.match(events[0], /^npm start -- --events-allow-local-sinks( > server\.log 2>&1)? &/);
  assert.match(events[1], /^until curl -sf localhost:8080\/readyz /, "the block waits for the server it starts");
  assert.ok(events.some((l) => l.startsWith("node examples/event-receiver.mjs")));
  const lines = [
    `npm() { [ "$1" = start ] && shift && [ "$1" = -- ] && shift; node ${JSON.stringify(BIN)} serve "$@"; }`,
    `npx() { [ "$1" = platform-api ] && shift; node ${JSON.stringify(BIN)} "$@"; }`,
    ...events.slice(0, 2),
    line(first, "npx platform-api bootstrap"),
    line(first, "TOKEN="),
    line(first, "ORG="),
    line(identities, "AUTH="),
    line(repos, "PLATFORM="),
    line(push, "CREDS="),
    ...events.slice(2),
    `echo walkthrough-done`,
    `wait`,
  ]
    .join("\n");
  const script = withTestPorts(lines, new Map([[8080, api], [5000, registry], [9999, sink]]));

  const child = spawn("bash", ["-c", script], { cwd: dir, detached: true, env: { ...process.env, HOME: dir, PORT: String(api), REGISTRY_PORT: String(registry), METRICS_PORT: "off", LOG_LEVEL: "warn" } });
  let out = "";
  let err = "";
  child.stdout.on("data", (c: Buffer) => (out += c.toString("utf8")));
  child.stderr.on("data", (c: Buffer) => (err += c.toString("utf8")));
  /** The receiver's whole line for an event of `type` (curl's answers end without a newline, so it may follow one). */
  const verified = (type: string) => {
    const at = out.indexOf(`verified ${type} `);
    const end = at < 0 ? -1 : out.indexOf("\n", at);
    return end < 0 ? undefined : out.slice(at, end);
  };
  try {
    const end = Date.now() + 90_000;
    while (!(out.includes("walkthrough-done") && verified("dev.platform.api.platform.registry.tag.created.v1") && verified("dev.platform.registry.push.v1"))) {
      if (Date.now() > end || child.exitCode !== null) assert.fail(`the walkthrough did not show the verified events\nstdout:\n${out}\nstderr:\n${err}`);
      await new Promise((r) => setTimeout(r, 100));
    }
    assert.doesNotMatch(out, /REJECTED/, "every event the server sent verified");
    const tag = verified("dev.platform.api.platform.registry.tag.created.v1")!;
    const body = JSON.parse(tag.slice(tag.indexOf("{"))) as { body: { name: string; digest: string } };
    assert.equal(body.body.name, "v2", "the pushed tag");
    assert.match(body.body.digest, /^sha256:[0-9a-f]{64}$/);
    assert.match(tag, /\(webhook:[0-9a-f]{40}, id [0-9a-f-]{36}\)/, "the token's subject is the subscription's group");
    assert.match(out, /"sink": ?"http:\/\/127\.0\.0\.1:\d+\/hook"/, "the subscription was created");
    // Every event it was sent is delivered by now: a failed attempt among them (a sink not yet listening) stays on the subscription.
    const owner = JSON.parse(readFileSync(join(dir, "owner.json"), "utf8")) as { token: string; organization: { uid: string } };
    const listed = await fetch(`http://127.0.0.1:${api}/events/v2/subscriptions?uidp.descendants_of=${owner.organization.uid}`, { headers: { authorization: `Bearer ${owner.token}` } });
    const { subscriptions } = (await listed.json()) as { subscriptions: Array<{ delivery?: { lastFailureTime?: string; lastFailureMessage?: string } }> };
    assert.equal(subscriptions.length, 1);
    assert.equal(subscriptions[0].delivery?.lastFailureTime, undefined, `no delivery to the receiver failed: ${subscriptions[0].delivery?.lastFailureMessage}`);
    // The receiver verifies: a token the server did not sign is refused, and said so.
    const unsigned = `${Buffer.from('{"alg":"none"}').toString("base64url")}.${Buffer.from(`{"sub":"webhook:x","aud":"http://127.0.0.1:${sink}/hook"}`).toString("base64url")}.`;
    const forged = await fetch(`http://127.0.0.1:${sink}/hook`, { method: "POST", headers: { authorization: `Bearer ${unsigned}`, "ce-type": "forged" }, body: "{}" });
    assert.equal(forged.status, 401);
    const end2 = Date.now() + 5_000;
    while (!out.includes("REJECTED forged")) {
      if (Date.now() > end2) assert.fail(`the receiver did not report the forged event: ${out}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  } finally {
    try {
      process.kill(-child.pid!, "SIGTERM");
    } catch {
      // already gone
    }
    await new Promise((r) => setTimeout(r, 300));
    rmSync(dir, { recursive: true, force: true });
  }
});
