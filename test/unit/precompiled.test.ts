// Queries compiled once per shape and run with each call's arguments bound: the same rows as building them.
import assert from "node:assert/strict";
import { test } from "node:test";
import Database from "better-sqlite3";
import { Kysely, SqliteDialect } from "kysely";
import { openDatabase } from "../../src/store/dialect.js";
import { runPrecompiled } from "../../src/store/precompiled.js";

interface Tables {
  t: { id: number; name: string; kind: string };
}

function store() {
  const db = new Kysely<Tables>({ dialect: new SqliteDialect({ database: new Database(":memory:") }) });
  return db;
}

test("each call binds its own arguments to the compiled shape, constants kept", async () => {
  const db = store();
  await db.schema.createTable("t").addColumn("id", "integer").addColumn("name", "text").addColumn("kind", "text").execute();
  await db.insertInto("t").values([{ id: 1, name: "a", kind: "x" }, { id: 2, name: "b", kind: "x" }, { id: 3, name: "a", kind: "y" }]).execute();
  const read = (name: string, id: number) =>
    runPrecompiled(db, "t by name and id", [name, id], (n, i) => db.selectFrom("t").selectAll().where("kind", "=", "x").where("name", "=", n).where("id", ">=", i as unknown as number));
  assert.deepEqual(await read("a", 1), [{ id: 1, name: "a", kind: "x" }]);
  assert.deepEqual(await read("b", 1), [{ id: 2, name: "b", kind: "x" }]);
  assert.deepEqual(await read("b", 3), []);
  await db.transaction().execute(async (trx) => {
    await trx.insertInto("t").values({ id: 4, name: "b", kind: "x" }).execute();
    const rows = await runPrecompiled(trx, "t by name and id", ["b", 3], (n, i) => trx.selectFrom("t").selectAll().where("kind", "=", "x").where("name", "=", n).where("id", ">=", i as unknown as number));
    assert.deepEqual(rows, [{ id: 4, name: "b", kind: "x" }], "in a transaction, on its connection");
  });
  await db.destroy();
});

test("a shape whose arguments are not each bound once is refused", async () => {
  const db = store();
  await assert.rejects(
    runPrecompiled(db, "twice", ["a"], (n) => db.selectFrom("t").selectAll().where("name", "=", n).where("kind", "=", n)),
    /argument 0 is not bound exactly once/,
  );
  await assert.rejects(
    runPrecompiled(db, "unused", ["a", "b"], (n) => db.selectFrom("t").selectAll().where("name", "=", n)),
    /argument 1 is not bound exactly once/,
  );
  await db.destroy();
});

test("on the store's SQLite database a read runs at once, counted by the query observers, and never inside another caller's open transaction", async () => {
  const { db, observeQueries } = openDatabase<Tables>(":memory:");
  const observed: string[] = [];
  observeQueries((operation) => observed.push(operation));
  await db.schema.createTable("t").addColumn("id", "integer").addColumn("name", "text").addColumn("kind", "text").execute();
  await db.insertInto("t").values({ id: 1, name: "a", kind: "x" }).execute();
  const byName = (name: string) => runPrecompiled(db, "t by name", [name], (n) => db.selectFrom("t").selectAll().where("name", "=", n));
  observed.length = 0;
  assert.deepEqual(await byName("a"), [{ id: 1, name: "a", kind: "x" }]);
  assert.deepEqual(observed, ["select"], "observed as Kysely observes the queries it runs");

  // A transaction of another caller holds the one connection, with a row not yet committed: the
  // read waits for it (as through Kysely) instead of seeing that row.
  let inserted!: () => void;
  const insertedRow = new Promise<void>((resolve) => (inserted = resolve));
  let commit!: () => void;
  const mayCommit = new Promise<void>((resolve) => (commit = resolve));
  const writer = db.transaction().execute(async (trx) => {
    await trx.insertInto("t").values({ id: 2, name: "b", kind: "x" }).execute();
    inserted();
    await mayCommit;
  });
  await insertedRow;
  let read: unknown;
  const reading = byName("b").then((rows) => (read = rows));
  await new Promise((resolve) => setTimeout(resolve, 20));
  assert.equal(read, undefined, "the read waits while the transaction is open");
  commit();
  await writer;
  await reading;
  assert.deepEqual(read, [{ id: 2, name: "b", kind: "x" }], "and then reads the committed row");
  await db.destroy();
});
