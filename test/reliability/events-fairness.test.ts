// One organization's subscriptions to a sink that never answers against another organization's
// event: each organization holds at most its share of the delivery slots (`perOrganization` of
// `concurrency`) and organizations take turns, so the other's event is delivered within a poll or
// two rather than after the hanging deliveries' timeout. A real server (default delivery settings
// but a short poll) on SQLite and PostgreSQL; the sinks are local HTTP servers.
import assert from "node:assert/strict";
import http from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { after, before, describe, test } from "node:test";
import { newChildUid, newRootUid } from "../../src/aip/uidp.js";
import { defaultEventsConfig } from "../../src/config.js";
import { insertSubscription } from "../../src/domains/events/store/subscriptions.js";
import { emitEvent } from "../../src/domains/events/store/outbox.js";
import { insertGroup } from "../../src/domains/iam/store/groups.js";
import { inTransaction } from "../../src/store/transaction.js";
import { dropFresh, testDatabases } from "../support/databases.js";
import { startTestServer, type TestServer } from "../support/test-server.js";

async function listen(server: http.Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
}

async function waitFor(condition: () => boolean, what: string, ms: number): Promise<void> {
  const end = Date.now() + ms;
  while (!condition()) {
    if (Date.now() > end) assert.fail(`timed out after ${ms} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

for (const database of await testDatabases()) {
  describe(`event delivery fairness on ${database.name}`, { skip: database.skip }, () => {
    /** Accepts every request and never answers, until closed. */
    const sockets = new Set<Socket>();
    let holding = 0;
    let mostHeld = 0;
    const hanging = http.createServer((req, res) => {
      holding++;
      mostHeld = Math.max(mostHeld, holding);
      res.on("close", () => holding--);
      req.resume();
    });
    hanging.on("connection", (socket) => {
      sockets.add(socket);
      socket.on("close", () => sockets.delete(socket));
    });
    /** Answers 204 and records each CloudEvent's subject and arrival time. */
    const arrived = new Map<string, number>();
    const receiver = http.createServer((req, res) => {
      req.resume();
      req.on("end", () => {
        arrived.set(String(req.headers["ce-subject"]), Date.now());
        res.writeHead(204).end();
      });
    });
    let server: TestServer;
    let dbUrl: string | undefined;
    let hangingUrl: string;
    let receiverUrl: string;

    before(async () => {
      hangingUrl = await listen(hanging);
      receiverUrl = await listen(receiver);
      dbUrl = database.name === "sqlite" ? undefined : await database.fresh();
      server = await startTestServer({ dbUrl, events: { allowLocalSinks: true, pollIntervalMs: 50 } });
    });
    after(async () => {
      for (const socket of sockets) socket.destroy();
      hanging.close();
      receiver.close();
      await server?.close();
      if (dbUrl) await dropFresh(dbUrl);
    });

    const emit = (group: string, subject: string) =>
      inTransaction(server.store.db, undefined, (trx) => emitEvent(trx, { type: "dev.test.fairness.v1", subject, group, actor: { subject: "" }, body: {} }, Date.now()));

    test("an organization's 20 subscriptions to a sink that never answers leave another organization's events prompt", { timeout: 60_000 }, async () => {
      const { concurrency, perOrganization, timeoutMs } = defaultEventsConfig;
      assert.ok(20 > concurrency, "more hanging subscriptions than slots");
      const a = server.org.uid;
      const folder = newChildUid(a);
      await insertGroup(server.store.db, { uid: folder, parent_uid: a, name: "hooks", description: "", create_time: 1, update_time: 1 });
      const b = newRootUid();
      await insertGroup(server.store.db, { uid: b, parent_uid: "", name: "tenant-b", description: "", create_time: 1, update_time: 1 });
      for (let i = 0; i < 20; i++) {
        const group = i % 2 === 0 ? a : folder;
        await insertSubscription(server.store.db, { uid: newChildUid(group), group_uid: group, sink: hangingUrl, create_time: 1 });
      }
      await insertSubscription(server.store.db, { uid: newChildUid(b), group_uid: b, sink: receiverUrl, create_time: 1 });

      await emit(folder, "a-1");
      await waitFor(() => holding > 0, "the hanging sink to hold tenant A's deliveries", 10_000);
      await new Promise((resolve) => setTimeout(resolve, 300)); // a few more polls: A takes whatever it may
      const latencies: number[] = [];
      for (let i = 1; i <= 3; i++) {
        const sent = Date.now();
        await emit(b, `b-${i}`);
        await waitFor(() => arrived.has(`b-${i}`), `tenant B's event ${i}`, timeoutMs - 1_000);
        latencies.push(arrived.get(`b-${i}`)! - sent);
      }
      assert.ok(Math.max(...latencies) < 3_000, `tenant B's events took ${latencies.join(", ")} ms`);
      assert.equal(mostHeld, perOrganization, "tenant A held its share, never more");
      assert.equal(holding, perOrganization, "tenant A's deliveries were still hanging throughout");
    });
  });
}
