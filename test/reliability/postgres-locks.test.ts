import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import pg from "pg";
import { dropFresh, testDatabases } from "../support/databases.js";
import { startTestServer, type TestServer } from "../support/test-server.js";

/**
 * Another client holding a lock on PostgreSQL (`LOCK TABLE tags`, a long migration, a stuck
 * session): writes that need it give up after the lock timeout (UNAVAILABLE, nothing written)
 * instead of holding pooled connections for as long as the lock is held, and reads that do not
 * need it are answered meanwhile (transactions never hold the connections kept for reads).
 */
const postgres = (await testDatabases()).find((d) => d.name === "postgres")!;
const LOCK_TIMEOUT_MS = 800;

describe("a lock held by another PostgreSQL client", { skip: postgres.skip }, () => {
  let url: string;
  let server: TestServer;
  let admin: pg.Client;
  let repoUid: string;

  before(async () => {
    url = await postgres.fresh();
    server = await startTestServer({ dbUrl: url, logLevel: "silent", limits: { lockTimeoutMs: LOCK_TIMEOUT_MS } });
    admin = new pg.Client({ connectionString: url });
    await admin.connect();
    const made = await fetch(`${server.apiUrl}/registry/v2/repos/${server.org.uid}`, {
      method: "POST",
      headers: { authorization: `Bearer ${server.ownerToken}`, "content-type": "application/json" },
      body: JSON.stringify({ name: "locked" }),
    });
    repoUid = ((await made.json()) as { uid: string }).uid;
  });

  after(async () => {
    await admin?.end();
    await server?.close();
    if (url) await dropFresh(url);
  });

  const call = async (method: string, path: string, body?: unknown) => {
    const started = performance.now();
    const res = await fetch(`${server.apiUrl}${path}`, {
      method,
      headers: { authorization: `Bearer ${server.ownerToken}`, ...(body ? { "content-type": "application/json" } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    });
    return { status: res.status, ms: performance.now() - started, body: (await res.json()) as { code?: number } };
  };

  test("writes give up after the lock timeout (UNAVAILABLE, nothing written); unrelated reads are answered meanwhile", { timeout: 30_000 }, async () => {
    await admin.query("begin");
    await admin.query("lock table tags in access exclusive mode");
    const unlocked = new Promise((resolve) => setTimeout(resolve, 6000)).then(() => admin.query("commit"));
    try {
      const writes = Array.from({ length: 12 }, (_, i) => call("POST", `/registry/v2/tags/${repoUid}`, { name: `t${i}`, digest: `sha256:${"0".repeat(63)}${i % 10}` }));
      await new Promise((resolve) => setTimeout(resolve, 100));
      const read = await call("GET", `/iam/v2/groups/${server.org.uid}`);
      assert.equal(read.status, 200);
      assert.ok(read.ms < 2000, `a read waited ${Math.round(read.ms)} ms behind writes waiting for a lock`);
      for (const write of await Promise.all(writes)) {
        assert.equal(write.status, 503, JSON.stringify(write.body));
        assert.equal(write.body.code, 14);
        assert.ok(write.ms < 5500, `a write held on for ${Math.round(write.ms)} ms`);
      }
    } finally {
      await unlocked;
    }
    const tags = await server.store.db.selectFrom("tags").select("name").where("repo_uid", "=", repoUid).execute();
    assert.deepEqual(tags, [], "nothing written");
    assert.equal((await call("POST", `/registry/v2/tags/${repoUid}`, { name: "after", digest: `sha256:${"1".repeat(64)}` })).status, 200);
  });
});
