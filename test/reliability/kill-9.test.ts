import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, test } from "node:test";
import { ReposService } from "../../gen/platform/registry/v2/repos_service_pb.js";
import { bootstrapChild, startChildServer } from "../support/child-server.js";
import { connectWire, grpcWire, methodOf, restWire, type Wire } from "../support/wires.js";
import { newLedger, runWriter, verifyDatabase, type TagLog } from "../support/write-load.js";

/**
 * kill -9 under write load. The server runs as a child process on a SQLite file;
 * four writers (REST and Connect JSON over HTTP/1.1, two gRPC clients over
 * HTTP/2) create groups and repos and move their own tags (a tag move writes the
 * tag row and a tag history record in one transaction) until the process dies
 * by SIGKILL; it restarts on the same file, cycle after cycle. Two kinds of kill:
 * - one cycle in four, from outside at a random time 60-260 ms into the load,
 *   of `bin/platform-api.js serve` itself;
 * - the others from inside the same CLI, right after its k-th write of the
 *   `tags` table (k random in 1..12; test/support/crash-after-writes.ts): a
 *   kill inside a tag move's transaction, between the tag row and its history
 *   record, which a kill at a random time rarely hits because calls spend most
 *   of their time outside SQL.
 * After each crash-point kill and at the end, the file must pass
 * `PRAGMA integrity_check`, hold every write the server acknowledged, and have
 * each tag equal to the newest record of its history (test/support/write-load.ts,
 * verifyDatabase). No call may fail with an answer from the server: only the
 * connection may break.
 *
 * What this catches: a tag and its history record written in two transactions
 * (or as autocommit statements) leave a tag whose newest history record differs
 * when a kill falls between them (about one crash-point kill in three does; with
 * the history written outside the tag's transaction on purpose, 4 runs of 12
 * cycles out of 4 failed, each within its first few cycles); an answer sent
 * before the commit loses acknowledged writes; a journal mode that is not safe
 * against a crash (`journal_mode = OFF` or `MEMORY`) or a file opened without
 * recovering its WAL corrupts the file or loses committed pages. What it cannot
 * catch: SIGKILL ends the process, not the machine, so what sits in the OS page
 * cache survives it; `synchronous = NORMAL` (durable against a process crash,
 * may lose the newest transactions on power loss, never corrupts) is only put to
 * the test by pulling the power.
 *
 * RELIABILITY_KILL_CYCLES sets the number of cycles (default 8: each restart
 * costs ~1 s of CPU, most of it loading modules; raise it for a longer soak).
 */
const CYCLES = Number(process.env.RELIABILITY_KILL_CYCLES ?? 8);
const dir = mkdtempSync(join(tmpdir(), "platform-api-kill9-"));
const db = join(dir, "platform.db");
const registryDir = join(dir, "registry");
after(() => rmSync(dir, { recursive: true, force: true }));

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

test(`SIGKILL under write load, ${CYCLES} times: the file stays intact and keeps every acknowledged write`, { timeout: 60_000 + CYCLES * 6_000 }, async (t) => {
  const boot = await bootstrapChild(db, "kill9");
  const ledger = newLedger();
  const wiresFor = (port: number): Wire[] => [restWire(port), grpcWire(port), connectWire(port), grpcWire(port)];
  let tags: TagLog[] = [];
  const kills: string[] = [];

  for (let cycle = 0; cycle < CYCLES; cycle++) {
    // Cycle 0 (which creates the writers' repo first) and then one cycle in four are killed from outside.
    const fromOutside = cycle % 4 === 0;
    const crashAfterWrites = fromOutside ? undefined : 1 + Math.floor(Math.random() * 12);
    const server = await startChildServer({ db, registryDir, crashAfterWrites });
    const wires = wiresFor(server.apiPort);
    if (cycle === 0) {
      const repo = await wires[0].call(
        methodOf(ReposService, "CreateRepo"),
        { parent: boot.org.uid, repo: { name: "moving" } },
        { method: "POST", path: `/registry/v2/repos/${boot.org.uid}`, body: { name: "moving" } },
        boot.ownerToken,
      );
      assert.equal(repo.code, 0, repo.message);
      const repoUid = repo.body!.uid as string;
      ledger.repos.set(repoUid, "moving");
      tags = wires.map((_, i) => ({ repoUid, name: `writer-${i}`, sent: [], lastAcked: -1, acked: 0 }));
      ledger.tags.push(...tags);
    }
    let dead = false;
    const failuresBefore = ledger.failures.length;
    const writers = wires.map((wire, i) =>
      runWriter({ wire, token: boot.ownerToken, orgUid: boot.org.uid, tag: tags[i], ledger, stop: () => dead }),
    );
    if (fromOutside) {
      const delay = 60 + Math.floor(Math.random() * 200);
      await sleep(delay);
      dead = true;
      server.child.kill("SIGKILL");
      kills.push(`${delay}ms`);
    } else {
      // Killed by itself; from outside if the writes never came.
      const timer = setTimeout(() => server.child.kill("SIGKILL"), 10_000);
      await server.exit;
      clearTimeout(timer);
      dead = true;
      kills.push(`#${crashAfterWrites}`);
    }
    assert.equal((await server.exit).signal, "SIGKILL");
    await Promise.all(writers);
    for (const wire of wires) wire.close();
    const answered = ledger.failures.slice(failuresBefore).filter((f) => f.answered);
    assert.deepEqual(answered, [], `calls the server refused (cycle ${cycle})`);
    // After a crash point, check at once: a tag left ahead of its history heals when it moves again.
    // (After a kill from outside the server itself recovers the WAL the killed process left.)
    if (!fromOutside) verifyDatabase(db, ledger);
  }

  const stored = verifyDatabase(db, ledger);
  const moves = ledger.tags.reduce((n, tag) => n + tag.acked, 0);
  t.diagnostic(
    `kills (after a delay, or after the #k-th tags write) ${kills.join(" ")}; ${ledger.attempts} calls, ${ledger.failures.length} cut by a kill; ` +
      `acknowledged ${ledger.groups.size} groups, ${ledger.repos.size} repos, ${moves} tag moves; ` +
      `stored ${stored.groups} groups, ${stored.repos} repos, ${stored.history} history records`,
  );
  // The load must have been real for the checks to mean anything.
  assert.ok(ledger.groups.size > 0 && ledger.repos.size > 1 && moves > 0, "the writers got writes acknowledged");
  assert.ok(ledger.failures.length > 0, "some kill fell while calls were in flight");
});
