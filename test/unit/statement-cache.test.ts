// The SQLite driver's statement cache: one prepare per SQL text, bounded, correct across schema changes.
import assert from "node:assert/strict";
import { test } from "node:test";
import Database from "better-sqlite3";
import { CompiledQuery, Kysely } from "kysely";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { LockWaitingSqliteDialect, StatementCache } from "../../src/store/sqlite-driver.js";
import { CACHEABLE, CACHEABLE_READ, isCached, cacheValue, cachedDerivation, cachedValue } from "../../src/store/cached-reads.js";

function counted(capacity?: number) {
  const database = new Database(":memory:");
  const prepared: string[] = [];
  const prepare = database.prepare.bind(database);
  database.prepare = ((sql: string) => {
    prepared.push(sql);
    return prepare(sql);
  }) as typeof database.prepare;
  return { database, prepared, cache: new StatementCache(database, capacity) };
}

test("a SQL text is prepared once and its statement reused, with each call's parameters", () => {
  const { prepared, cache } = counted();
  cache.execute(CompiledQuery.raw("create table t (id integer primary key, name text)"));
  const insert = "insert into t (name) values (?)";
  assert.equal(cache.execute(CompiledQuery.raw(insert, ["a"])).numAffectedRows, 1n);
  assert.equal(cache.execute(CompiledQuery.raw(insert, ["b"])).insertId, 2n);
  const select = "select name from t where id = ?";
  assert.deepEqual(cache.execute(CompiledQuery.raw(select, [1])).rows, [{ name: "a" }]);
  assert.deepEqual(cache.execute(CompiledQuery.raw(select, [2])).rows, [{ name: "b" }]);
  assert.equal(prepared.filter((sql) => sql === insert).length, 1);
  assert.equal(prepared.filter((sql) => sql === select).length, 1);
});

test("the least recently used statement is dropped beyond the capacity", () => {
  const { prepared, cache } = counted(2);
  const q = (n: number) => CompiledQuery.raw(`select ${n} as n`);
  cache.execute(q(1));
  cache.execute(q(2));
  cache.execute(q(1));
  cache.execute(q(3)); // drops 2, the least recently used
  cache.execute(q(1));
  cache.execute(q(2));
  assert.deepEqual(prepared, ["select 1 as n", "select 2 as n", "select 3 as n", "select 2 as n"]);
});

test("a cached statement reads the schema as it is now", () => {
  const { cache } = counted();
  cache.execute(CompiledQuery.raw("create table t (a text)"));
  cache.execute(CompiledQuery.raw("insert into t values ('x')"));
  const select = CompiledQuery.raw("select * from t");
  assert.deepEqual(cache.execute(select).rows, [{ a: "x" }]);
  cache.execute(CompiledQuery.raw("alter table t add column b text default 'y'"));
  assert.deepEqual(cache.execute(select).rows, [{ a: "x", b: "y" }]);
});

test("a CACHEABLE_READ result is kept until this connection writes or another one commits", () => {
  const dir = mkdtempSync(join(tmpdir(), "cacheable-"));
  try {
    const file = join(dir, "db.sqlite");
    const mine = new Database(file);
    const other = new Database(file);
    const statements = new StatementCache(mine);
    statements.execute(CompiledQuery.raw("create table t (id integer)"));
    const count = CompiledQuery.raw(`select count(*) as n from t where id > ? ${CACHEABLE_READ}`, [0]);
    const read = () => (statements.execute<{ n: number }>(count).rows[0] as { n: number }).n;
    assert.equal(read(), 0);
    mine.prepare("insert into t values (1)").run(); // not through the cache: unseen
    assert.equal(read(), 0, "kept while nothing it can see wrote");
    statements.execute(CompiledQuery.raw("insert into t values (2)"));
    assert.equal(read(), 2, "this connection's write through the cache: read again");
    statements.execute(CompiledQuery.raw("insert into t values (5) returning id"));
    assert.equal(read(), 3, "a write returning rows: read again");
    other.prepare("insert into t values (3)").run();
    assert.equal(read(), 4, "another connection's commit: read again");
    assert.equal(statements.execute<{ n: number }>(CompiledQuery.raw(`select count(*) as n from t where id > ? ${CACHEABLE_READ}`, [2])).rows[0].n, 2, "other parameters, another entry");
    mine.close();
    other.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("a value derived from a cached result is computed once per database version, through Kysely", async () => {
  const dir = mkdtempSync(join(tmpdir(), "derived-"));
  try {
    const file = join(dir, "db.sqlite");
    const other = new Database(file);
    other.exec("create table t (id integer)");
    const db = new Kysely<{ t: { id: number } }>({ dialect: new LockWaitingSqliteDialect(new Database(file), 1000) });
    let computed = 0;
    const derive = async (marked = true) => {
      const q = db.selectFrom("t").select("id").orderBy("id");
      const rows = await (marked ? q.modifyEnd(CACHEABLE) : q).execute();
      return cachedDerivation(rows, "ids", () => {
        computed++;
        return rows.map((r) => r.id).join(",");
      });
    };
    assert.equal(await derive(), "");
    assert.equal(await derive(), "");
    assert.equal(computed, 1, "the same kept result: derived once");
    await db.insertInto("t").values({ id: 1 }).execute();
    assert.equal(await derive(), "1", "after this connection's write: derived again");
    other.prepare("insert into t values (2)").run();
    assert.equal(await derive(), "1,2", "after another connection's commit: derived again");
    assert.equal(computed, 3);
    assert.equal(await derive(false), "1,2");
    assert.equal(await derive(false), "1,2");
    assert.equal(computed, 5, "a read not marked CACHEABLE: derived every time");
    await db.destroy();
    other.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("a value kept with a cached result is found while it is young enough; rows not kept keep nothing", async () => {
  const database = new Database(":memory:");
  const statements = new StatementCache(database);
  statements.execute(CompiledQuery.raw("create table t (id integer)"));
  const read = () => statements.execute(CompiledQuery.raw(`select id from t ${CACHEABLE_READ}`)).rows;
  const rows = read();
  assert.equal(isCached(rows), true);
  assert.equal(cachedValue(rows, "answer"), undefined);
  assert.equal(cacheValue(rows, "answer", "built"), "built");
  assert.equal(cachedValue(read(), "answer"), "built", "the same kept result, read again");
  await new Promise((resolve) => setTimeout(resolve, 20));
  assert.equal(cachedValue(read(), "answer", 10_000), "built", "within the age asked for");
  assert.equal(cachedValue(read(), "answer", 10), undefined, "older than the age asked for");

  const plain = statements.execute(CompiledQuery.raw("select id from t")).rows;
  assert.equal(isCached(plain), false);
  assert.equal(cacheValue(plain, "answer", "built"), "built");
  assert.equal(cachedValue(plain, "answer"), undefined, "a read not marked CACHEABLE keeps nothing");
  database.close();
});
