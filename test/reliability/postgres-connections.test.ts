import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import pg from "pg";
import { isUnavailable } from "../../src/store/dialect.js";
import { dropFresh, POSTGRES_URL, testDatabases } from "../support/databases.js";
import { startTestServer, type TestServer } from "../support/test-server.js";

/**
 * PostgreSQL closing the server's connections (`pg_terminate_backend`, `idle_session_timeout`, a
 * failover, a pooler restart) must cost at most the calls that were using them, answered
 * UNAVAILABLE: the process carries on and the pool opens new connections.
 */
const postgres = (await testDatabases()).find((d) => d.name === "postgres")!;
const APPLICATION = `lost-connections-${process.pid}`;

describe("PostgreSQL closing pooled connections", { skip: postgres.skip }, () => {
  let url: string;
  let server: TestServer;
  let admin: pg.Client;

  before(async () => {
    const fresh = new URL(await postgres.fresh());
    fresh.searchParams.set("application_name", APPLICATION);
    url = fresh.toString();
    server = await startTestServer({ dbUrl: url, logLevel: "silent" });
    admin = new pg.Client({ connectionString: POSTGRES_URL });
    await admin.connect();
  });

  after(async () => {
    await admin?.end();
    await server?.close();
    if (url) await dropFresh(url);
  });

  /** Terminates every connection of this server; answers how many there were. */
  const terminateAll = async () =>
    (await admin.query("select pg_terminate_backend(pid) from pg_stat_activity where application_name = $1", [APPLICATION])).rowCount ?? 0;

  const getGroup = async () => {
    const res = await fetch(`${server.apiUrl}/iam/v2/groups/${server.org.uid}`, { headers: { authorization: `Bearer ${server.ownerToken}` } });
    return { status: res.status, body: (await res.json()) as { code?: number } };
  };

  test("idle connections closed by the server: the next calls are served on new ones", async () => {
    await Promise.all(Array.from({ length: 6 }, getGroup));
    assert.ok((await terminateAll()) > 0, "the pool held connections");
    await new Promise((r) => setTimeout(r, 200));
    const answers = await Promise.all(Array.from({ length: 6 }, getGroup));
    for (const answer of answers) assert.ok(answer.status === 200 || answer.status === 503, JSON.stringify(answer));
    assert.equal((await getGroup()).status, 200);
  });

  test("a connection closed while a transaction holds it: that transaction fails UNAVAILABLE, the process carries on", async () => {
    const failure = await server.store.db
      .transaction()
      .execute(async (trx) => {
        await trx.selectFrom("groups").select("uid").limit(1).execute();
        await terminateAll();
        await new Promise((r) => setTimeout(r, 200));
        await trx.selectFrom("groups").select("uid").limit(1).execute();
      })
      .then(
        () => undefined,
        (error: unknown) => error,
      );
    assert.ok(failure instanceof Error, "the transaction failed");
    assert.ok(isUnavailable(failure), `UNAVAILABLE: ${(failure as Error).message}`);
    assert.equal((await getGroup()).status, 200);
  });
});
