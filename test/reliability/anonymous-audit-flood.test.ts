import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import http from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { GroupsService } from "../../gen/platform/iam/v2/groups_service_pb.js";
import { DEFAULT_ANONYMOUS_REFUSAL_LIMITS } from "../../src/telemetry/anonymous-refusals.js";
import { MAX_ANONYMOUS_RESOURCE_CHARS } from "../../src/telemetry/audit-log.js";
import { startTestServer, type TestServer } from "../support/test-server.js";
import { allWires, methodOf, type Wire } from "../support/wires.js";

/**
 * Changes refused to callers without a credential, each naming a 1 KB uid of the caller's choice,
 * sent as fast as one client can over gRPC, Connect and REST: the audit log writes the first few
 * of that client's lines (their resource cut), counts the rest in one summary line, and still
 * writes another client's line in full.
 */

const dir = mkdtempSync(join(tmpdir(), "platform-api-audit-flood-"));
const auditPath = join(dir, "audit.log");
after(() => rmSync(dir, { recursive: true, force: true }));

type Line = Record<string, unknown> & { action: string; resource: string; outcome: string; actor: { subject: string } };
const linesOf = (): Line[] =>
  readFileSync(auditPath, "utf8")
    .split("\n")
    .filter(Boolean)
    .map((line) => JSON.parse(line) as Line);

const PER_WIRE = 150;
const chosenUid = "f".repeat(40) + "/0123456789abcdef".repeat(58); // 1,026 characters of a well-formed uid

let server: TestServer;
let wires: Wire[];
let closed = false;
before(async () => {
  // One window for the whole flood, however slowly this machine sends it: the default's counts.
  server = await startTestServer({ auditLog: auditPath, auditAnonymousRefusals: { windowMs: 600_000 } });
  wires = allWires(server.apiPort).filter((w) => w.name !== "grpc-web");
});
after(async () => {
  for (const wire of wires) wire.close();
  if (!closed) await server.close();
});

/** An anonymous CreateGroup under `parent` over plain HTTP from the local address `localAddress`. */
function restFrom(localAddress: string, parent: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const body = JSON.stringify({ name: "nobody's" });
    const req = http.request(
      { host: "127.0.0.1", port: server.apiPort, localAddress, method: "POST", path: `/iam/v2/groups/${parent}`, headers: { "content-type": "application/json", "content-length": Buffer.byteLength(body) } },
      (res) => {
        res.resume();
        res.on("end", () => resolve(res.statusCode ?? 0));
      },
    );
    req.on("error", reject);
    req.end(body);
  });
}

test("a client's flood of refused anonymous changes is written a few lines at a time, cut, then counted in one line; another client's line is written", async (t) => {
  const createGroup = methodOf(GroupsService, "CreateGroup");
  const before = linesOf().length;
  const started = performance.now();
  const outcomes = await Promise.all(
    wires.flatMap((wire) =>
      Array.from({ length: PER_WIRE }, () => wire.call(createGroup, { parent: chosenUid, group: { name: "nobody's" } }, { method: "POST", path: `/iam/v2/groups/${chosenUid}`, body: { name: "nobody's" } })),
    ),
  );
  const seconds = (performance.now() - started) / 1000;
  for (const out of outcomes) assert.equal(out.code, 16, out.message);
  const flood = linesOf().slice(before);
  const bytes = flood.reduce((sum, line) => sum + JSON.stringify(line).length + 1, 0);
  t.diagnostic(`${outcomes.length} refused calls in ${seconds.toFixed(1)} s wrote ${flood.length} lines, ${bytes} bytes`);

  const { perClient } = DEFAULT_ANONYMOUS_REFUSAL_LIMITS;
  assert.equal(flood.length, perClient, `the first ${perClient} lines of the client are written, then none`);
  for (const line of flood) {
    assert.deepEqual([line.outcome, line.actor], ["UNAUTHENTICATED", { subject: "anonymous" }]);
    assert.equal(line.clientAddress, "127.0.0.1", "an anonymous caller is named by its address");
    assert.equal(line.resource, chosenUid.slice(0, MAX_ANONYMOUS_RESOURCE_CHARS), "the caller-chosen uid is cut");
    assert.equal(line.resourceLength, chosenUid.length, "and the line says how long it was");
    assert.ok(JSON.stringify(line).length < 700, `a line of ${JSON.stringify(line).length} characters`);
  }

  assert.equal(await restFrom("127.0.0.2", chosenUid), 401);
  const [other] = linesOf().slice(before + flood.length);
  assert.equal(other?.clientAddress, "127.0.0.2", "another client's refusal is written meanwhile");

  closed = true;
  await server.close();
  const summaries = linesOf().filter((line) => line.action === "audit.suppressed");
  assert.equal(summaries.length, 1, JSON.stringify(summaries));
  const [summary] = summaries;
  assert.equal(summary.clientAddress, "127.0.0.1");
  assert.equal(summary.suppressed, outcomes.length - perClient, "every refusal held back is counted");
  assert.deepEqual(summary.outcomes, { UNAUTHENTICATED: outcomes.length - perClient });
  assert.deepEqual(summary.actor, { subject: "anonymous" });
});
