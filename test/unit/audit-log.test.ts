import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, renameSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, test } from "node:test";
import { create } from "@bufbuild/protobuf";
import { MethodOptions_IdempotencyLevel } from "@bufbuild/protobuf/wkt";
import { Health } from "../../gen/grpc/health/v1/health_pb.js";
import { GroupSchema } from "../../gen/platform/iam/v2/group_pb.js";
import { CreateGroupRequestSchema, GroupsService, UpdateGroupRequestSchema } from "../../gen/platform/iam/v2/groups_service_pb.js";
import { API_SERVICES } from "../../src/server/domains.js";
import { AuditLogError, openAuditLog, type AuditEntry } from "../../src/telemetry/audit-log.js";
import { auditedMethod } from "../../src/telemetry/audited-methods.js";

const dir = mkdtempSync(join(tmpdir(), "platform-api-audit-unit-"));
after(() => rmSync(dir, { recursive: true, force: true }));

const entry = (n: number): AuditEntry => ({
  host: "api",
  action: "platform.iam.v2.GroupsService/CreateGroup",
  resource: `acme/${n}`,
  outcome: n % 2 === 0 ? "OK" : "PERMISSION_DENIED",
  actor: { subject: `acme/owner-${n}` },
  requestId: `req-${n}`,
  protocol: "rest",
});

const linesOf = (path: string) => readFileSync(path, "utf8").split("\n").filter(Boolean).map((l) => JSON.parse(l) as Record<string, unknown>);

test("each entry is one whole JSON line with every field, appended to what the file held", () => {
  const path = join(dir, "whole.log");
  const first = openAuditLog(path, { now: () => Date.UTC(2025, 0, 2, 3, 4, 5) });
  first.write(entry(0));
  first.close();
  // Opened again (a restart): appended, never truncated; a second writer's lines stay whole too.
  const [a, b] = [openAuditLog(path), openAuditLog(path)];
  for (let n = 1; n <= 200; n++) (n % 2 === 0 ? a : b).write({ ...entry(n), resource: `acme/${"x".repeat(n * 50)}` });
  a.close();
  b.close();
  const text = readFileSync(path, "utf8");
  assert.ok(text.endsWith("\n"));
  const lines = linesOf(path);
  assert.equal(lines.length, 201);
  assert.deepEqual(lines[0], {
    time: "2025-01-02T03:04:05.000Z",
    msg: "audit",
    host: "api",
    action: "platform.iam.v2.GroupsService/CreateGroup",
    resource: "acme/0",
    outcome: "OK",
    actor: { subject: "acme/owner-0" },
    requestId: "req-0",
    protocol: "rest",
  });
  for (const line of lines) for (const field of ["time", "host", "action", "resource", "outcome", "actor", "requestId"]) assert.ok(field in line, `${field} in ${JSON.stringify(line).slice(0, 80)}`);
  assert.equal(a.failures + b.failures, 0);
});

test("a registry entry has no protocol, and a pull token says so", () => {
  const path = join(dir, "registry.log");
  const log = openAuditLog(path);
  log.write({ host: "registry", action: "registry.pull_token.use", resource: "repository:acme/app:pull", outcome: "OK", actor: { subject: "acme/pt", pullToken: true }, requestId: "r" });
  log.close();
  const [line] = linesOf(path);
  assert.deepEqual(line.actor, { subject: "acme/pt", pullToken: true });
  assert.ok(!("protocol" in line));
});

test("a file that cannot be opened is refused at once, naming it", () => {
  assert.throws(() => openAuditLog(join(dir, "no-such-folder", "audit.log")), (error: Error) => error instanceof AuditLogError && error.message.includes("no-such-folder/audit.log"));
});

test("reopen follows the path (logrotate); a write that fails is counted, reported once, and does not throw", () => {
  const path = join(dir, "rotated.log");
  const reports: string[] = [];
  const log = openAuditLog(path, { onFailure: (error) => reports.push(error.message) });
  log.write(entry(0));
  renameSync(path, `${path}.1`);
  log.write(entry(1));
  log.reopen();
  log.write(entry(2));
  assert.equal(linesOf(`${path}.1`).length, 2);
  assert.deepEqual(linesOf(path).map((l) => l.requestId), ["req-2"]);
  log.close();
  log.write(entry(3)); // closed: dropped, not written to stdout or thrown
  assert.equal(linesOf(path).length, 1);

  // /dev/full: every write fails with ENOSPC.
  const full = openAuditLog("/dev/full", { onFailure: (error) => reports.push(error.message) });
  full.write(entry(0));
  full.write(entry(1));
  assert.equal(full.failures, 2);
  assert.equal(reports.length, 1);
  assert.match(reports[0], /ENOSPC/);
  full.close();
});

test("reopen keeps the open file when the path cannot be opened again", () => {
  const folder = mkdtempSync(join(dir, "moved-"));
  const path = join(folder, "audit.log");
  const log = openAuditLog(path);
  // The path's folder is gone (moved away): no one, root included, can open the path again.
  renameSync(folder, `${folder}.moved`);
  try {
    assert.throws(() => log.reopen(), AuditLogError);
    log.write(entry(0));
    assert.equal(linesOf(join(`${folder}.moved`, "audit.log")).length, 1);
  } finally {
    log.close();
  }
});

test("a method is audited unless it declares NO_SIDE_EFFECTS; health and reflection never are", () => {
  for (const service of API_SERVICES) {
    for (const method of service.methods) {
      assert.equal(auditedMethod(method) !== undefined, method.idempotency !== MethodOptions_IdempotencyLevel.NO_SIDE_EFFECTS, `${service.typeName}/${method.name}`);
    }
  }
  assert.equal(auditedMethod(GroupsService.method.getGroup), undefined);
  for (const method of Health.methods) assert.equal(auditedMethod(method), undefined, method.name);
  assert.equal(auditedMethod(GroupsService.method.createGroup)?.action, "platform.iam.v2.GroupsService/CreateGroup");
});

test("the resource: the answer's uid, else the request's uid or parent, else its resource's uid, else the scope", () => {
  const createGroup = auditedMethod(GroupsService.method.createGroup)!;
  const request = create(CreateGroupRequestSchema, { parent: "acme", group: { name: "team a" } });
  assert.equal(createGroup.resourceOf(request, create(GroupSchema, { uid: "acme/team" }), "acme"), "acme/team");
  assert.equal(createGroup.resourceOf(request, undefined, "acme"), "acme");
  const updateGroup = auditedMethod(GroupsService.method.updateGroup)!;
  assert.equal(updateGroup.resourceOf(create(UpdateGroupRequestSchema, { group: { uid: "acme/team" } }), undefined, undefined), "acme/team");
  const deleteGroup = auditedMethod(GroupsService.method.deleteGroup)!;
  assert.equal(deleteGroup.resourceOf({ uid: "acme/team" }, {}, "acme"), "acme/team");
  assert.equal(deleteGroup.resourceOf({ uid: "" }, undefined, undefined), "");
});

/** A refused change of an anonymous caller from `clientAddress`. */
const anonymous = (clientAddress: string, n = 0): AuditEntry => ({
  host: "api",
  action: "platform.iam.v2.GroupsService/CreateGroup",
  resource: `chosen-${n}`,
  outcome: n % 3 === 0 ? "UNAUTHENTICATED" : "INVALID_ARGUMENT",
  actor: { subject: "anonymous" },
  requestId: `req-${n}`,
  protocol: "grpc",
  clientAddress,
});

test("a resource is cut: at 256 characters for an anonymous caller, at 4096 for others; the line says how long it was", () => {
  const path = join(dir, "cut.log");
  const log = openAuditLog(path);
  log.write({ ...anonymous("192.0.2.1"), resource: "a".repeat(1024) });
  log.write({ ...entry(1), resource: "b".repeat(5000) });
  log.write({ ...entry(3), resource: "c".repeat(4096) });
  log.close();
  const [short, long, whole] = linesOf(path);
  assert.deepEqual([(short.resource as string).length, short.resourceLength, short.clientAddress], [256, 1024, "192.0.2.1"]);
  assert.deepEqual([(long.resource as string).length, long.resourceLength, "clientAddress" in long], [4096, 5000, false]);
  assert.deepEqual([(whole.resource as string).length, "resourceLength" in whole], [4096, false], "a uid as long as uids go is written whole");
});

test("refused anonymous changes: per client and in all, the first lines of a window are written, the rest counted per client when the log closes", () => {
  const path = join(dir, "anonymous.log");
  const log = openAuditLog(path, { anonymousRefusals: { perClient: 3, inAll: 5, windowMs: 600_000 } });
  for (let n = 0; n < 10; n++) log.write(anonymous("192.0.2.1", n));
  for (let n = 0; n < 4; n++) log.write(anonymous("192.0.2.2", n));
  for (let n = 0; n < 2; n++) log.write(anonymous(`198.51.100.${n}`, n));
  log.write(entry(0));
  log.write({ ...entry(2), actor: { subject: "anonymous" } });
  const written = linesOf(path);
  assert.deepEqual(
    written.map((l) => [l.clientAddress ?? l.actor, l.requestId]),
    [
      ["192.0.2.1", "req-0"], ["192.0.2.1", "req-1"], ["192.0.2.1", "req-2"],
      ["192.0.2.2", "req-0"], ["192.0.2.2", "req-1"],
      [{ subject: "acme/owner-0" }, "req-0"],
      [{ subject: "anonymous" }, "req-2"],
    ],
    "3 for the first client, 2 more in all; identified callers and calls that succeeded are never held back",
  );
  log.close();
  const summaries = linesOf(path).slice(written.length);
  assert.deepEqual(
    summaries.map((l) => [l.action, l.clientAddress, l.suppressed, l.outcomes, l.outcome]),
    [
      ["audit.suppressed", "192.0.2.1", 7, { UNAUTHENTICATED: 3, INVALID_ARGUMENT: 4 }, "SUPPRESSED"],
      ["audit.suppressed", "192.0.2.2", 2, { INVALID_ARGUMENT: 1, UNAUTHENTICATED: 1 }, "SUPPRESSED"],
      ["audit.suppressed", "198.51.100.0", 1, { UNAUTHENTICATED: 1 }, "SUPPRESSED"],
      ["audit.suppressed", "198.51.100.1", 1, { INVALID_ARGUMENT: 1 }, "SUPPRESSED"],
    ],
  );
});

test("summaries naming a client are at most the in-all count; the other clients are counted in one line", () => {
  const path = join(dir, "many-clients.log");
  const log = openAuditLog(path, { anonymousRefusals: { perClient: 1, inAll: 2, windowMs: 600_000 } });
  for (let n = 0; n < 6; n++) for (let i = 0; i < 2; i++) log.write(anonymous(`203.0.113.${n}`, i));
  log.close();
  const lines = linesOf(path);
  const summaries = lines.filter((l) => l.action === "audit.suppressed");
  assert.equal(lines.length - summaries.length, 2);
  assert.deepEqual(
    summaries.map((l) => [l.clientAddress, l.suppressed]),
    [["203.0.113.0", 1], ["203.0.113.1", 1], ["*", 8]],
  );
});

test("when a window ends its summary is written, and the next window writes lines again", async () => {
  const path = join(dir, "windows.log");
  const log = openAuditLog(path, { anonymousRefusals: { perClient: 2, inAll: 10, windowMs: 100 } });
  try {
    for (let n = 0; n < 5; n++) log.write(anonymous("192.0.2.9", n));
    assert.equal(linesOf(path).length, 2);
    await new Promise((resolve) => setTimeout(resolve, 250));
    const [summary] = linesOf(path).slice(2);
    assert.deepEqual([summary?.action, summary?.suppressed], ["audit.suppressed", 3]);
    log.write(anonymous("192.0.2.9", 5));
    assert.equal(linesOf(path).at(-1)?.requestId, "req-5");
  } finally {
    log.close();
  }
});
