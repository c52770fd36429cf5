import assert from "node:assert/strict";
import http from "node:http";
import { after, before, describe, test } from "node:test";
import { defaultLimits } from "../../src/config.js";
import { dropFresh, testDatabases } from "../support/databases.js";
import { startTestIdp, type TestIdp } from "../support/test-idp.js";
import { startTestServer, type TestServer } from "../support/test-server.js";

/**
 * Unauthenticated terminals asking for device codes (`POST /auth/v1/device/code`) as fast as they
 * can, from several client addresses at once: each address gets its pending bound and then 429
 * with `Retry-After`, the server its bound in all, and once a client's codes expire it gets one
 * again while their rows are deleted. On SQLite and PostgreSQL.
 */

const PER_CLIENT = defaultLimits.maxPendingDeviceLoginsPerClient;
const IN_ALL = 5 * PER_CLIENT;
const ASKS = 30;

interface Answer {
  status: number;
  retryAfter: string | undefined;
  body: Record<string, unknown>;
}

for (const database of await testDatabases()) {
  describe(`device codes asked for by many clients (${database.name})`, { skip: database.skip }, () => {
    let idp: TestIdp;
    let server: TestServer;
    let dbUrl: string;

    before(async () => {
      idp = await startTestIdp();
      dbUrl = await database.fresh();
      server = await startTestServer({
        apiUrl: "listen",
        dbUrl,
        upstreamIssuers: { allowHttp: true, allowPrivateAddresses: true },
        login: { issuer: idp.issuer, clientId: "platform" },
        limits: { maxPendingDeviceLogins: IN_ALL },
      });
      await idp.addClient({ client_id: "platform", redirect_uris: [`${server.apiUrl}/auth/v1/callback`] });
    });
    after(async () => {
      await server?.close();
      await idp?.close();
      if (dbUrl) await dropFresh(dbUrl);
    });

    /** POST /auth/v1/device/code from the local address `localAddress` (the 127/8 loopback range). */
    function askFrom(localAddress: string): Promise<Answer> {
      return new Promise((resolve, reject) => {
        const req = http.request({ host: "127.0.0.1", port: server.apiPort, localAddress, method: "POST", path: "/auth/v1/device/code", agent: false }, (res) => {
          const chunks: Buffer[] = [];
          res.on("data", (chunk: Buffer) => chunks.push(chunk));
          res.on("end", () => {
            const retryAfter = res.headers["retry-after"];
            resolve({ status: res.statusCode ?? 0, retryAfter: typeof retryAfter === "string" ? retryAfter : undefined, body: JSON.parse(Buffer.concat(chunks).toString("utf8")) as Record<string, unknown> });
          });
        });
        req.on("error", reject);
        req.end();
      });
    }

    /** `ASKS` requests at once from each of `clients`: the answers by client. */
    async function flood(clients: string[]): Promise<Map<string, Answer[]>> {
      const answers = await Promise.all(clients.map(async (client) => [client, await Promise.all(Array.from({ length: ASKS }, () => askFrom(client)))] as const));
      return new Map(answers);
    }

    const pendingRows = async (clientAddress?: string) => {
      let query = server.store.db.selectFrom("logins").select((eb) => eb.fn.countAll<number>().as("n")).where("kind", "=", "device");
      if (clientAddress !== undefined) query = query.where("client_address", "=", clientAddress);
      return Number((await query.executeTakeFirstOrThrow()).n);
    };

    function assertRefused(answer: Answer): void {
      assert.equal(answer.status, 429, JSON.stringify(answer.body));
      assert.equal(answer.body.error, "slow_down");
      const seconds = Number(answer.retryAfter);
      assert.ok(Number.isInteger(seconds) && seconds > 0 && seconds <= 600, `Retry-After: ${answer.retryAfter}`);
    }

    test(`four clients asking ${ASKS} times at once each get ${PER_CLIENT} device codes, then 429 with Retry-After`, async () => {
      const clients = ["127.0.0.11", "127.0.0.12", "127.0.0.13", "127.0.0.14"];
      const byClient = await flood(clients);
      for (const [client, answers] of byClient) {
        const granted = answers.filter((a) => a.status === 200);
        assert.equal(granted.length, PER_CLIENT, `${client}: ${answers.map((a) => a.status).join(" ")}`);
        for (const a of granted) assert.ok(typeof a.body.device_code === "string" && typeof a.body.user_code === "string");
        for (const a of answers.filter((a) => a.status !== 200)) assertRefused(a);
        assert.equal(await pendingRows(client), PER_CLIENT, `${client}: one row per code granted, none for a refusal`);
      }
    });

    test(`four more clients share what is left of the ${IN_ALL} in all`, async () => {
      const clients = ["127.0.0.21", "127.0.0.22", "127.0.0.23", "127.0.0.24"];
      const byClient = await flood(clients);
      let granted = 0;
      for (const [client, answers] of byClient) {
        const own = answers.filter((a) => a.status === 200).length;
        assert.ok(own <= PER_CLIENT, `${client} got ${own}`);
        granted += own;
        for (const a of answers.filter((a) => a.status !== 200)) assertRefused(a);
      }
      assert.equal(granted, IN_ALL - 4 * PER_CLIENT);
      assert.equal(await pendingRows(), IN_ALL);
      assertRefused(await askFrom("127.0.0.31"));
    });

    test("once a client's codes expire it gets one again, and the expired rows are deleted", async () => {
      assertRefused(await askFrom("127.0.0.11"));
      // Their ten minutes passed.
      await server.store.db.updateTable("logins").set({ expire_time: Date.now() - 1 }).where("client_address", "=", "127.0.0.11").execute();
      const again = await askFrom("127.0.0.11");
      assert.equal(again.status, 200, JSON.stringify(again.body));
      assert.equal(await pendingRows("127.0.0.11"), 1, "the expired rows are gone");
      assert.equal(await pendingRows(), IN_ALL - PER_CLIENT + 1);
    });
  });
}
