import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, test } from "node:test";
import SqliteDatabase from "better-sqlite3";
import { GroupsService } from "../../gen/platform/iam/v2/groups_service_pb.js";
import { PingService } from "../../gen/platform/ping/v2/ping_pb.js";
import { serveOverWires } from "../support/over-wires.js";
import { methodOf, reasonOf, type Wire } from "../support/wires.js";

/**
 * A second connection on the same SQLite file (the CLI next to a live server)
 * holds the write lock. A write waits for it up to `lockTimeoutMs` without
 * stalling the server, then fails UNAVAILABLE (retryable) having written nothing.
 */
const LOCK_TIMEOUT_MS = 1500;

const dir = mkdtempSync(join(tmpdir(), "platform-api-lock-"));
const file = join(dir, "platform.db");
let other: SqliteDatabase.Database;

const served = serveOverWires({
  dbUrl: file,
  limits: { lockTimeoutMs: LOCK_TIMEOUT_MS },
  logLevel: "silent",
  prepare() {
    other = new SqliteDatabase(file);
  },
});
const { server, wires } = served;

after(() => {
  if (other.inTransaction) other.exec("rollback");
  other.close();
  rmSync(dir, { recursive: true, force: true });
});

/** Takes the write lock on the other connection and releases it after `ms`. */
function holdLock(ms: number): Promise<void> {
  other.exec("begin immediate");
  return new Promise((resolve) =>
    setTimeout(() => {
      other.exec("commit");
      resolve();
    }, ms),
  );
}

const createGroup = (wire: Wire, name: string) =>
  wire.call(
    methodOf(GroupsService, "CreateGroup"),
    { parent: server().org.uid, group: { name } },
    { method: "POST", path: `/iam/v2/groups/${server().org.uid}`, body: { name } },
    server().ownerToken,
  );

const groupsNamed = async (name: string) => (await server().store.db.selectFrom("groups").select("uid").where("name", "=", name).execute()).length;

served.describeOverWires(
  (wireName) => `SQLite write lock held by another connection, over ${wireName}`,
  ({ wire, wireName }) => {
    test("a write waits for the lock and succeeds; the server keeps answering meanwhile", async () => {
      const name = `waits ${wireName}`;
      const released = holdLock(1000);
      const started = performance.now();
      let lockHeld = true;
      void released.then(() => (lockHeld = false));
      const write = createGroup(wire(), name);
      try {
        const ping = await wire().call(methodOf(PingService, "Ping"), {}, { method: "GET", path: "/ping/v2/ping" });
        assert.equal(ping.code, 0);
        // Ordering, not a time budget: the machine may be loaded, but Ping must not queue behind the lock.
        assert.equal(lockHeld, true, "a call without the store is served while the write waits for the lock");
      } finally {
        await released;
      }
      const out = await write;
      assert.equal(out.code, 0, out.message);
      assert.ok(performance.now() - started >= 950, "the write waited for the lock");
      assert.equal(await groupsNamed(name), 1);
    });

    test("a write that cannot get the lock in time is UNAVAILABLE and writes nothing", async () => {
      const name = `gives up ${wireName}`;
      const released = holdLock(LOCK_TIMEOUT_MS + 700);
      const started = performance.now();
      const out = await createGroup(wire(), name);
      const waited = performance.now() - started;
      await released;
      assert.equal(out.code, 14, out.message);
      assert.equal(reasonOf(out), "UNAVAILABLE");
      if (wireName === "rest") assert.equal(out.httpStatus, 503);
      assert.ok(waited >= LOCK_TIMEOUT_MS - 100 && waited < LOCK_TIMEOUT_MS + 600, `gave up after ${Math.round(waited)} ms`);
      assert.equal(await groupsNamed(name), 0);
      // Once the lock is free, the same write succeeds.
      assert.equal((await createGroup(wire(), name)).code, 0);
    });
  },
  ["grpc", "connect", "rest"],
);

describe("SQLite write lock held by another connection: reads and deadlines", () => {
  test("reads are served while several writes wait for the lock", async () => {
    const released = holdLock(1200);
    let lockHeld = true;
    void released.then(() => (lockHeld = false));
    const writes = [1, 2, 3, 4].map((i) => createGroup(wires()[0], `queued ${i}`));
    try {
      await new Promise((resolve) => setTimeout(resolve, 50));
      for (const wire of wires()) {
        const read = await wire.call(methodOf(GroupsService, "GetGroup"), { uid: server().org.uid }, { method: "GET", path: `/iam/v2/groups/${server().org.uid}` }, server().ownerToken);
        assert.equal(read.code, 0, read.message);
        assert.equal(lockHeld, true, `${wire.name}: a read is answered while the writes wait for the lock`);
      }
    } finally {
      await released;
    }
    for (const out of await Promise.all(writes)) assert.equal(out.code, 0, out.message);
  });

  test("a write's own deadline ends its wait for the lock: DEADLINE_EXCEEDED, nothing written", async () => {
    const released = holdLock(LOCK_TIMEOUT_MS + 500);
    const started = performance.now();
    const res = await fetch(`${server().apiUrl}/iam/v2/groups/${server().org.uid}`, {
      method: "POST",
      headers: { authorization: `Bearer ${server().ownerToken}`, "content-type": "application/json", "connect-timeout-ms": "300" },
      body: JSON.stringify({ name: "deadline while locked" }),
    });
    const waited = performance.now() - started;
    await released;
    assert.equal(res.status, 504, await res.text());
    assert.ok(waited < LOCK_TIMEOUT_MS - 300, `answered after ${Math.round(waited)} ms`);
    assert.equal(await groupsNamed("deadline while locked"), 0);
  });
});

describe("SQLite write lock held by another connection, on the registry host", () => {
  test("an upload that cannot get the lock in time is 503 UNAVAILABLE", async () => {
    const name = "acme/locked";
    const platform = await server().server.tokens.issue({ subject: server().ownerUid, audience: "http://registry.test" });
    const tokenAnswer = await fetch(`${server().registryUrl}/token?scope=${encodeURIComponent(`repository:${name}:pull,push`)}`, {
      headers: { authorization: `Bearer ${platform.token}` },
    });
    const token = ((await tokenAnswer.json()) as { token: string }).token;
    const released = holdLock(LOCK_TIMEOUT_MS + 700);
    const res = await fetch(`${server().registryUrl}/v2/${name}/blobs/uploads/`, { method: "POST", headers: { authorization: `Bearer ${token}` } });
    await released;
    const body = (await res.json()) as { errors: Array<{ code: string }> };
    assert.equal(res.status, 503);
    assert.equal(body.errors[0].code, "UNAVAILABLE");
    assert.equal(res.headers.get("retry-after"), "1");
  });
});
