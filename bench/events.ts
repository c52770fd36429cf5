import { mkdtempSync, rmSync } from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { newChildUid } from "../src/aip/uidp.js";
import { bootstrapOrganization } from "../src/server/bootstrap.js";
import { defaultLimits } from "../src/config.js";
import { cloudEventBody, cloudEventHeaders } from "../src/domains/events/dispatcher.js";
import { emitEvent } from "../src/domains/events/store/outbox.js";
import { insertSubscription } from "../src/domains/events/store/subscriptions.js";
import { insertRepo } from "../src/domains/registry/store/repos.js";
import { createLogger } from "../src/logger.js";
import { createFileContentStore } from "../src/domains/registry/content/content-store.js";
import { createServer } from "../src/server/server.js";
import { openStore } from "../src/server/open-store.js";
import { inTransaction } from "../src/store/transaction.js";

/**
 * Events figures (`npm run bench:events`), on a SQLite file as `serve` runs it:
 * 1. events delivered per second to a loopback receiver by the dispatcher (8 subscriptions, 8 at
 *    once), next to a same-run baseline of plain POSTs of the same headers and bodies (8 loops);
 * 2. the cost the outbox write adds to a CreateTag (Connect JSON, one call at a time): without any
 *    subscription, then with one on the organization.
 */
const EVENTS = Number(process.env.BENCH_EVENTS ?? 4000);
const SUBSCRIPTIONS = 8;
const CALLS = Number(process.env.BENCH_CALLS ?? 1000);

const dir = mkdtempSync(join(tmpdir(), "platform-api-bench-events-"));
const store = await openStore(join(dir, "bench.db"));
const { organization, identity } = await bootstrapOrganization(store, "acme", Date.now());
let received = 0;
const receiver = http.createServer((req, res) => {
  req.resume();
  req.on("end", () => {
    received++;
    res.writeHead(204).end();
  });
});
await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve));
const sink = (i: number) => `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook/${i}`;
const server = await createServer(
  store,
  { apiUrl: "http://api.bench", registryUrl: "http://registry.bench", events: { allowLocalSinks: true, pollIntervalMs: 5, concurrency: SUBSCRIPTIONS }, logLevel: "silent", limits: defaultLimits },
  createLogger("silent"),
  createFileContentStore(join(dir, "content")),
);
const apiPort = await new Promise<number>((resolve) => server.api.server.listen(0, "127.0.0.1", () => resolve((server.api.server.address() as AddressInfo).port)));
server.startWork();
const { token } = await server.tokens.issue({ subject: identity.uid, audience: "http://api.bench" });
const repo = await insertRepo(store.db, { uid: newChildUid(organization.uid), group_uid: organization.uid, name: "bench/app", description: "", readme: "", create_time: 1, update_time: 1 });

async function createTags(label: string): Promise<number> {
  const started = performance.now();
  for (let i = 0; i < CALLS; i++) {
    const res = await fetch(`http://127.0.0.1:${apiPort}/platform.registry.v2.TagsService/CreateTag`, {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: JSON.stringify({ parent: repo.uid, tag: { name: `${label}${i}`, digest: `sha256:${i.toString(16).padStart(64, "0")}` } }),
    });
    if (res.status !== 200) throw new Error(`CreateTag: ${res.status} ${await res.text()}`);
  }
  return ((performance.now() - started) * 1000) / CALLS;
}

// 2 first, while no subscription exists.
await createTags("warm");
const withoutUs = await createTags("plain");
await insertSubscription(store.db, { uid: newChildUid(organization.uid), group_uid: organization.uid, sink: "http://127.0.0.1:9/unused", create_time: 1 });
const withUs = await createTags("subscribed");
await store.db.deleteFrom("event_deliveries").execute();
await store.db.deleteFrom("subscriptions").execute();

// 1: the backlog is written before the clock starts, then drained by the dispatcher.
const sample = await inTransaction(store.db, undefined, (trx) =>
  emitEvent(trx, { type: "dev.platform.api.platform.registry.tag.created.v1", subject: repo.uid, group: organization.uid, actor: { subject: identity.uid }, body: { tag: { name: "x" } } }, Date.now()),
);
const headers = cloudEventHeaders(sample, "http://api.bench/events/v2/subscriptions", (await server.tokens.issue({ subject: "webhook:x", audience: sink(0) })).token);
const body = Buffer.from(cloudEventBody(sample));
received = 0;
let baselineStarted = performance.now();
await Promise.all(
  Array.from({ length: SUBSCRIPTIONS }, async (_, s) => {
    const agent = new http.Agent({ keepAlive: false });
    for (let i = 0; i < EVENTS / SUBSCRIPTIONS; i++) {
      await new Promise<void>((resolve, reject) => {
        const req = http.request(sink(s), { method: "POST", headers, agent }, (res) => {
          res.resume();
          res.on("end", resolve);
        });
        req.on("error", reject);
        req.end(body);
      });
    }
  }),
);
const baselinePerSecond = EVENTS / ((performance.now() - baselineStarted) / 1000);

for (let s = 0; s < SUBSCRIPTIONS; s++) await insertSubscription(store.db, { uid: newChildUid(organization.uid), group_uid: organization.uid, sink: sink(s), create_time: 1 });
const perSubscription = EVENTS / SUBSCRIPTIONS;
// Each event goes to all 8 subscriptions; write EVENTS / 8 events so EVENTS deliveries are owed.
await store.db.deleteFrom("event_deliveries").execute();
await inTransaction(store.db, undefined, async (trx) => {
  for (let i = 0; i < perSubscription; i++) {
    await emitEvent(trx, { type: "dev.platform.api.platform.registry.tag.created.v1", subject: repo.uid, group: organization.uid, actor: { subject: identity.uid }, body: { tag: { name: `e${i}` } } }, Date.now());
  }
});
received = 0;
baselineStarted = performance.now();
while (received < EVENTS) await new Promise((r) => setTimeout(r, 5));
const deliveredPerSecond = EVENTS / ((performance.now() - baselineStarted) / 1000);

process.stdout.write(
  [
    `events delivered per second (${EVENTS}, ${SUBSCRIPTIONS} subscriptions): ${deliveredPerSecond.toFixed(0)}`,
    `baseline plain POSTs per second (same headers and body, ${SUBSCRIPTIONS} loops, a connection each): ${baselinePerSecond.toFixed(0)}`,
    `CreateTag without a subscription (the event row only): ${withoutUs.toFixed(0)} µs per call; with one (the event row and a delivery row): ${withUs.toFixed(0)} µs per call (${CALLS} calls each)`,
  ].join("\n") + "\n",
);
await server.close();
await store.close();
receiver.close();
rmSync(dir, { recursive: true, force: true });
