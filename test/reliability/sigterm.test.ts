import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, test } from "node:test";
import { ReposService } from "../../gen/platform/registry/v2/repos_service_pb.js";
import { bootstrapChild, startChildServer } from "../support/child-server.js";
import { connectH2Wire, grpcWire, methodOf, restWire, type Wire } from "../support/wires.js";
import { newLedger, runWriter, verifyDatabase } from "../support/write-load.js";

/**
 * SIGTERM under write load, on every transport at once: nine writers (REST over
 * HTTP/1.1, gRPC and Connect over HTTP/2, three each) keep creating groups and
 * repos and moving their tags while `platform-api serve` gets SIGTERM. Calls the
 * server took complete; calls that come too late fail cleanly (connection
 * refused or closed, an HTTP/2 stream refused after GOAWAY, or UNAVAILABLE),
 * never with another answer from the server; the process
 * exits 0 within EXIT_BOUND_MS; the file then holds every acknowledged write and
 * nothing of any failed call (test/support/write-load.ts, verifyDatabase with
 * failedWroteNothing). test/e2e/cli.test.ts has the simpler REST-only case.
 */
const EXIT_BOUND_MS = 5_000;
const dir = mkdtempSync(join(tmpdir(), "platform-api-sigterm-"));
const db = join(dir, "platform.db");
after(() => rmSync(dir, { recursive: true, force: true }));

test("SIGTERM with calls in flight on REST, gRPC and Connect: they finish, late ones fail cleanly, exit 0, nothing lost or half-written", { timeout: 60_000 }, async (t) => {
  const boot = await bootstrapChild(db, "sigterm");
  const server = await startChildServer({ db, registryDir: join(dir, "registry") });
  const port = server.apiPort;
  const wires: Wire[] = [0, 1, 2].flatMap(() => [restWire(port), grpcWire(port), connectH2Wire(port)]);
  const ledger = newLedger();
  const repo = await wires[0].call(
    methodOf(ReposService, "CreateRepo"),
    { parent: boot.org.uid, repo: { name: "moving" } },
    { method: "POST", path: `/registry/v2/repos/${boot.org.uid}`, body: { name: "moving" } },
    boot.ownerToken,
  );
  assert.equal(repo.code, 0, repo.message);
  const repoUid = repo.body!.uid as string;
  ledger.repos.set(repoUid, "moving");

  let exited = false;
  const writers = wires.map((wire, i) => {
    const tag = { repoUid, name: `writer-${i}`, sent: [], lastAcked: -1, acked: 0 };
    ledger.tags.push(tag);
    return runWriter({ wire, token: boot.ownerToken, orgUid: boot.org.uid, tag, ledger, stop: () => exited });
  });
  // Every writer has had a write acknowledged (the connections are up), then a little more load.
  const acked = () => ledger.groups.size + ledger.repos.size - 1 + ledger.tags.reduce((n, tag) => n + tag.acked, 0);
  while (acked() < 2 * wires.length) await new Promise((resolve) => setTimeout(resolve, 10));
  await new Promise((resolve) => setTimeout(resolve, Math.floor(Math.random() * 50)));
  const termAt = Date.now();
  server.child.kill("SIGTERM");
  const timer = setTimeout(() => server.child.kill("SIGKILL"), EXIT_BOUND_MS);
  const { code, signal } = await server.exit;
  const exitMs = Date.now() - termAt;
  clearTimeout(timer);
  exited = true;
  await Promise.all(writers);
  for (const wire of wires) wire.close();

  assert.equal(signal, null, `killed after ${EXIT_BOUND_MS} ms: SIGTERM did not stop it (${server.stderr()})`);
  assert.equal(code, 0, server.stderr());
  const early = ledger.failures.filter((f) => f.at < termAt);
  assert.deepEqual(early, [], "calls failed before the SIGTERM");
  // Calls in flight at the SIGTERM complete; a call that failed was not yet received (it wrote nothing: checked below).
  const inFlight = ledger.failures.filter((f) => f.startedAt < termAt);
  // Answered failures may only say the server is going away.
  const refused = ledger.failures.filter((f) => f.answered && !(f.code === 14 && (f.httpStatus === undefined || f.httpStatus === 503)));
  assert.deepEqual(refused, [], "calls answered with an error other than UNAVAILABLE");

  const stored = verifyDatabase(db, ledger, { failedWroteNothing: true });
  const moves = ledger.tags.reduce((n, tag) => n + tag.acked, 0);
  t.diagnostic(
    `exit ${exitMs} ms after SIGTERM; ${ledger.attempts} calls, ${ledger.failures.length} failed after it, ${inFlight.length} of them sent before it ` +
      `(${[...new Set(ledger.failures.map((f) => `${f.wire}: ${f.code} ${f.message.slice(0, 60)}`))].join("; ")}); ` +
      `acknowledged ${ledger.groups.size} groups, ${ledger.repos.size} repos, ${moves} tag moves; stored ${stored.history} history records`,
  );
});
