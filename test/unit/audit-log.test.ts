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
import { API_SERVICES } from "../../src/domains/index.js";
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
