import assert from "node:assert/strict";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { test } from "node:test";
import { bootstrapChild, startChildServer, type ChildServer } from "../support/child-server.js";
import { dropFresh, testDatabases } from "../support/databases.js";

/**
 * Two `serve` processes on one PostgreSQL database, both dispatching: every event reaches each
 * subscription exactly once (claims are `FOR UPDATE SKIP LOCKED` plus a lease), in order, and
 * both processes take part in the delivering: each makes at most two deliveries at once (one to
 * its organization's subscriptions: half its concurrency), so neither can hold all four
 * subscriptions however their polls line up.
 */
const postgres = (await testDatabases()).find((d) => d.name === "postgres");
const skip = postgres === undefined ? "TEST_DIALECTS excludes postgres" : postgres.skip;
const SUBSCRIPTIONS = 4;
const REPOS = 30;

async function post(url: string, token: string, body: object): Promise<Record<string, unknown>> {
  const res = await fetch(url, { method: "POST", headers: { authorization: `Bearer ${token}`, "content-type": "application/json" }, body: JSON.stringify(body) });
  const json = (await res.json()) as Record<string, unknown>;
  assert.equal(res.status, 200, JSON.stringify(json));
  return json;
}

test("two servers on one PostgreSQL deliver each event once per subscription, in order", { skip, timeout: 180_000 }, async () => {
  const url = await postgres!.fresh();
  /** Per sink path, the `ce-id`s in the order they arrived. */
  const received = new Map<string, string[]>();
  const receiver = http.createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      const ids = received.get(req.url!) ?? received.set(req.url!, []).get(req.url!)!;
      ids.push(String(req.headers["ce-id"]));
      // A little latency, so that deliveries of the two processes overlap.
      setTimeout(() => res.writeHead(204).end(), 10);
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve));
  const base = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
  const replicas: ChildServer[] = [];
  try {
    const boot = await bootstrapChild(url, "evcluster");
    const args = ["--events-allow-local-sinks", "--db-pool-size", "4", "--events-concurrency", "2"];
    replicas.push(...(await Promise.all([0, 1].map(() => startChildServer({ db: url, registryDir: "/nonexistent", logLevel: "info", args })))));
    const org = boot.org.uid;
    for (let i = 0; i < SUBSCRIPTIONS; i++) await post(`${replicas[i % 2].apiUrl}/events/v2/subscriptions/${org}`, boot.ownerToken, { sink: `${base}/s${i}` });
    for (let i = 0; i < REPOS; i++) await post(`${replicas[i % 2].apiUrl}/registry/v2/repos/${org}`, boot.ownerToken, { name: `cluster/app${i}` });

    // Subscription i sees its own creation and those of the later ones, then every repo.
    const expected = (i: number) => SUBSCRIPTIONS - i + REPOS;
    const end = Date.now() + 90_000;
    while ([...Array(SUBSCRIPTIONS).keys()].some((i) => (received.get(`/s${i}`)?.length ?? 0) < expected(i))) {
      if (Date.now() > end) assert.fail(`not every event arrived: ${JSON.stringify([...received].map(([k, v]) => [k, v.length]))}`);
      await new Promise((r) => setTimeout(r, 100));
    }
    await new Promise((r) => setTimeout(r, 1_500));
    const events = await fetch(`${replicas[0].apiUrl}/events/v2/subscriptions?uidp.descendants_of=${org}`, { headers: { authorization: `Bearer ${boot.ownerToken}` } });
    const listed = ((await events.json()) as { subscriptions: Array<{ sink: string; delivery: { pendingCount?: string } }> }).subscriptions;
    assert.ok(listed.every((s) => (s.delivery.pendingCount ?? "0") === "0"), "nothing pending");
    for (let i = 0; i < SUBSCRIPTIONS; i++) {
      const ids = received.get(`/s${i}`)!;
      assert.equal(ids.length, expected(i), `subscription ${i}: each event once`);
      assert.equal(new Set(ids).size, ids.length, `subscription ${i}: no event twice`);
    }
    // One order for every subscription: the events they share arrive in the same order.
    const last = received.get(`/s${SUBSCRIPTIONS - 1}`)!;
    for (let i = 0; i < SUBSCRIPTIONS - 1; i++) assert.deepEqual(received.get(`/s${i}`)!.filter((id) => last.includes(id)), last, `subscription ${i}'s order`);
    const deliveredBy = replicas.map((r) => r.stdout().split("\n").filter((l) => l.includes("event delivered")).length);
    assert.equal(deliveredBy[0] + deliveredBy[1], [...Array(SUBSCRIPTIONS).keys()].reduce((n, i) => n + expected(i), 0), "each delivery logged once, by the process that made it");
    const problems = replicas.flatMap((r) => r.stdout().split("\n").filter((l) => /"level":"(warn|error)"/.test(l)));
    assert.ok(deliveredBy.every((n) => n > 0), `both processes delivered: ${deliveredBy.join(" and ")}; warnings and errors: ${problems.join("\n")}`);
  } finally {
    await Promise.all(
      replicas.map(async (r) => {
        r.child.kill("SIGTERM");
        await r.exit;
      }),
    );
    await new Promise<void>((resolve) => receiver.close(() => resolve()));
    await dropFresh(url);
  }
});
