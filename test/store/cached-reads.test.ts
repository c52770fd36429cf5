// Cached reads stay exact across replicas: a read answered again from a cached result sees every
// write another store on the same database committed before it was asked for.
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { createPager } from "../../src/aip/pagination.js";
import { newChildUid, newRootUid } from "../../src/aip/uidp.js";
import { getGroup, groupOrderable, insertGroup, listGroups, updateGroup } from "../../src/domains/iam/store/groups.js";
import { openStore, type Store } from "../../src/server/open-store.js";
import { isCached } from "../../src/store/cached-reads.js";
import { coalesced, PgCachedReads } from "../../src/store/pg-cached-reads.js";
import { StatementCache } from "../../src/store/sqlite-driver.js";
import { inTransaction } from "../../src/store/transaction.js";
import SqliteDatabase from "better-sqlite3";
import { dropFresh, testDatabases } from "../support/databases.js";

const dir = mkdtempSync(join(tmpdir(), "kept-reads-"));
after(() => rmSync(dir, { recursive: true, force: true }));

for (const database of await testDatabases()) {
  describe(`kept reads on ${database.name}, two replicas`, { skip: database.skip }, () => {
    let url: string;
    let a: Store;
    let b: Store;
    const root = newRootUid();
    const page = createPager({ secret: Buffer.from("k") }).parse({ pageSize: 50, pageToken: "", orderBy: "name", skip: 0 }, groupOrderable, "f");
    const now = Date.now();

    before(async () => {
      // Two stores on one database, as two replicas (SQLite: one file, two connections).
      url = database.name === "sqlite" ? join(dir, "kept.db") : await database.fresh();
      a = await openStore(url);
      b = await openStore(url);
      await insertGroup(a.db, { uid: root, parent_uid: "", name: "kept-org", description: "first", create_time: now, update_time: now });
    });
    after(async () => {
      await a.close();
      await b.close();
      await dropFresh(url);
    });

    test("a Get's row, read again after the other replica's write, is the written one", async () => {
      assert.equal((await getGroup(a.db, root)).description, "first");
      const again = await getGroup(a.db, root);
      assert.equal(isCached(again), true, "read again from the kept result");
      await updateGroup(b.db, root, { name: "kept-org", description: "second", update_time: now + 1 });
      assert.equal((await getGroup(a.db, root)).description, "second");
    });

    test("a List's page, read again after the other replica's insert, counts it", async () => {
      const before = await listGroups(a.db, { uidp: { childrenOf: root }, visible: undefined }, page);
      assert.equal(isCached((await listGroups(a.db, { uidp: { childrenOf: root }, visible: undefined }, page)).rows), true);
      await insertGroup(b.db, { uid: newChildUid(root), parent_uid: root, name: `child-${before.total}`, description: "", create_time: now, update_time: now });
      const after = await listGroups(a.db, { uidp: { childrenOf: root }, visible: undefined }, page);
      assert.equal(after.total, before.total + 1);
    });

    test("a Get's read outside Kysely's executor, kept or not, is observed as a select", async () => {
      const seen: string[] = [];
      a.observeQueries((operation, seconds, failed) => seen.push(`${operation}${failed ? " failed" : ""}${seconds >= 0 ? "" : " negative"}`));
      await getGroup(a.db, root);
      await getGroup(a.db, root);
      assert.deepEqual(seen, ["select", "select"]);
    });

    test("inside a transaction a read sees the transaction's own change, never a cached result", async () => {
      await getGroup(a.db, root);
      await inTransaction(a.db, undefined, async (trx) => {
        await updateGroup(trx, root, { name: "kept-org", description: "in transaction", update_time: now + 2 });
        assert.equal((await getGroup(trx, root)).description, "in transaction");
      });
      assert.equal((await getGroup(b.db, root)).description, "in transaction");
    });
  });
}

describe("kept reads on sqlite, answered once per turn of the event loop", () => {
  let store: Store;
  let other: SqliteDatabase.Database;
  const root = newRootUid();
  const now = Date.now();
  const file = join(dir, "turns.db");
  let versionsAsked = 0;
  const version = StatementCache.prototype.version;

  before(async () => {
    store = await openStore(file);
    // Another connection on the file, writing synchronously (as another process would).
    other = new SqliteDatabase(file);
    await insertGroup(store.db, { uid: root, parent_uid: "", name: "turns-org", description: "first", create_time: now, update_time: now });
    StatementCache.prototype.version = function (this: StatementCache) {
      versionsAsked++;
      return version.call(this);
    };
  });
  after(async () => {
    StatementCache.prototype.version = version;
    other.close();
    await store.close();
  });

  test("reads asked in one turn share one data_version; reads in later turns ask again", async () => {
    versionsAsked = 0;
    const rows = await Promise.all(Array.from({ length: 5 }, () => getGroup(store.db, root)));
    assert.equal(versionsAsked, 1);
    assert.deepEqual(new Set(rows.map((row) => row.description)), new Set(["first"]));
    await getGroup(store.db, root);
    await getGroup(store.db, root);
    assert.equal(versionsAsked, 3);
  });

  test("a commit another connection makes before the turn's reads are answered is in their answer", async () => {
    assert.equal((await getGroup(store.db, root)).description, "first");
    const asked = getGroup(store.db, root);
    other.prepare("update groups set description = 'second' where uid = ?").run(root);
    assert.equal((await asked).description, "second");
    other.prepare("update groups set description = 'first' where uid = ?").run(root);
    assert.equal((await getGroup(store.db, root)).description, "first");
  });

  test("a read answered while a transaction is open never sees the transaction's uncommitted change", async () => {
    for (const askedFirst of [true, false]) {
      let inside!: () => void;
      const changed = new Promise<void>((resolve) => (inside = resolve));
      // Asked before the transaction begins, it is answered at the end of the turn, when the transaction has changed the row.
      const early = askedFirst ? getGroup(store.db, root) : undefined;
      const transaction = inTransaction(store.db, undefined, async (trx) => {
        await updateGroup(trx, root, { name: "turns-org", description: "rolled back", update_time: now + 1 });
        inside();
        await new Promise((resolve) => setTimeout(resolve, 20));
        throw new Error("roll back");
      });
      await changed;
      const late = getGroup(store.db, root);
      await assert.rejects(transaction, /roll back/);
      assert.equal((await late).description, "first");
      if (early) assert.equal((await early).description, "first");
    }
  });
});

test("coalesced: each caller is answered by a read sent after it called, shared with the turn's callers and those that called while it waited", async () => {
  let sent = 0;
  const pending: Array<(n: number) => void> = [];
  const read = coalesced(() => {
    const n = ++sent;
    return new Promise<number>((resolve) => pending.push(() => resolve(n)));
  });
  const checkPhase = () => new Promise((resolve) => setImmediate(resolve));
  const first = read();
  const alsoFirst = read();
  assert.equal(sent, 0, "sent at the turn's check phase");
  await checkPhase();
  assert.equal(sent, 1, "one read for the turn's callers");
  const second = read();
  const third = read();
  await checkPhase();
  assert.equal(sent, 1, "one read in flight; the later callers wait for the next");
  pending.shift()!(0);
  assert.deepEqual([await first, await alsoFirst], [1, 1]);
  await checkPhase();
  assert.equal(sent, 2, "the next read starts when the first ends");
  pending.shift()!(0);
  assert.deepEqual([await second, await third], [2, 2]);
});

test("PostgreSQL cached reads stop asking the clock while writes keep every read from being kept, and ask again later", async () => {
  let clockReads = 0;
  const pool = { query: async () => ({ rows: [{ lsn: `0/${++clockReads}` }] }) }; // the position moves between any two reads
  const kept = new PgCachedReads(pool);
  const query = { sql: "select 1 /* cacheable */", parameters: [], query: {} } as never;
  let runs = 0;
  const run = async () => ({ rows: [{ n: ++runs }] });
  for (let i = 0; i < 256; i++) await kept.read(query, run);
  assert.equal(clockReads, 256, "a window of reads, each asking the clock, none kept");
  for (let i = 0; i < 1024; i++) await kept.read(query, run);
  assert.equal(clockReads, 256, "then reads go to the database without the clock");
  assert.equal(runs, 256 + 1024, "every one of them read");
  await kept.read(query, run);
  assert.equal(clockReads, 257, "and then the clock is asked again");
});

test("PostgreSQL cached reads without a clock (a standby, a role not allowed it) read every time and stop asking", async () => {
  let clockReads = 0;
  const pool = {
    query: async () => {
      clockReads++;
      throw Object.assign(new Error("recovery is in progress"), { code: "55000" });
    },
  };
  const kept = new PgCachedReads(pool);
  const query = { sql: "select 1 /* cacheable */", parameters: [], query: {} } as never;
  let runs = 0;
  for (let i = 0; i < 3; i++) {
    const answer = await kept.read(query, async () => ({ rows: [{ n: ++runs }] }));
    assert.deepEqual(answer.rows, [{ n: i + 1 }], "read from the database each time");
    assert.equal(isCached(answer.rows), false);
  }
  assert.equal(clockReads, 1, "the clock is not asked again");
});
