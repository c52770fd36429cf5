import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, test } from "node:test";
import { promisify } from "node:util";
import type { OsvRecord } from "../../src/engines/advisories/osv/record.js";
import { openStore } from "../../src/server/open-store.js";
import { RUSTSEC_DIR } from "../support/osv-records.js";
import { makeZip } from "../support/zip-writer.js";
import { BIN } from "../support/repo.js";

/** `platform-api advisories import` as a user runs it: a child process over a SQLite file. */

const execFileAsync = promisify(execFile);
const dir = mkdtempSync(join(tmpdir(), "platform-api-advisories-"));
after(() => rmSync(dir, { recursive: true, force: true }));

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

async function importer(db: string, ...args: string[]): Promise<Run> {
  try {
    const { stdout, stderr } = await execFileAsync(process.execPath, [BIN, "advisories", "import", "--db", db, ...args], { encoding: "utf8" });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const e = error as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

async function rows(db: string) {
  const store = await openStore(db);
  try {
    const records = await store.db.selectFrom("osv_records").select(["uid", "modified", "withdrawn_time"]).orderBy("uid").execute();
    const advisories = await store.db.selectFrom("advisories").select(["advisory_id", "artifact_name", "withdrawn_time"]).orderBy("uid").execute();
    return { records, advisories };
  } finally {
    await store.close();
  }
}

const RECORD = "RUSTSEC-2016-0001";
const original = () => JSON.parse(readFileSync(join(RUSTSEC_DIR, "crates", `${RECORD}.json`), "utf8")) as OsvRecord;

test("the RustSec feed imports whole, and a second run changes nothing", async (t) => {
  const db = join(dir, "rustsec.db");
  const started = performance.now();
  const first = await importer(db, RUSTSEC_DIR);
  const seconds = (performance.now() - started) / 1000;
  assert.equal(first.code, 0, first.stderr);
  assert.equal(first.stdout, "read 1206, new 1206, updated 0, unchanged 0, rejected 0\n");
  assert.equal(first.stderr, "", "no progress line when stderr is not a terminal");
  const stored = await rows(db);
  assert.equal(stored.records.length, 1206);
  assert.equal(stored.advisories.length, 1206);
  assert.equal(stored.advisories.filter((a) => a.withdrawn_time !== null).length, 13, "RustSec's 13 withdrawn records");
  const second = await importer(db, RUSTSEC_DIR);
  assert.equal(second.stdout, "read 1206, new 0, updated 0, unchanged 1206, rejected 0\n");
  assert.deepEqual(await rows(db), stored);
  t.diagnostic(`first import of 1,206 records: ${seconds.toFixed(2)} s including process start`);
});

test("a later modified replaces the record; a withdrawn one stops being an advisory", async () => {
  const db = join(dir, "replace.db");
  const feed = join(dir, "replace");
  mkdirSync(feed);
  copyFileSync(join(RUSTSEC_DIR, "crates", `${RECORD}.json`), join(feed, `${RECORD}.json`));
  assert.equal((await importer(db, feed)).stdout, "read 1, new 1, updated 0, unchanged 0, rejected 0\n");

  const changed = { ...original(), modified: "2030-01-01T00:00:00Z" };
  changed.affected![0].package!.name = "openssl-renamed";
  writeFileSync(join(feed, `${RECORD}.json`), JSON.stringify(changed));
  assert.equal((await importer(db, feed)).stdout, "read 1, new 0, updated 1, unchanged 0, rejected 0\n");
  assert.deepEqual((await rows(db)).advisories, [{ advisory_id: RECORD, artifact_name: "openssl-renamed", withdrawn_time: null }]);

  writeFileSync(join(feed, `${RECORD}.json`), JSON.stringify({ ...changed, modified: "2020-01-01T00:00:00Z", summary: "older" }));
  assert.equal((await importer(db, feed)).stdout, "read 1, new 0, updated 0, unchanged 1, rejected 0\n");

  writeFileSync(join(feed, `${RECORD}.json`), JSON.stringify({ ...changed, modified: "2031-01-01T00:00:00Z", withdrawn: "2031-01-01T00:00:00Z" }));
  assert.equal((await importer(db, feed)).stdout, "read 1, new 0, updated 1, unchanged 0, rejected 0\n");
  const after = await rows(db);
  assert.equal(Number(after.records[0].withdrawn_time), Date.parse("2031-01-01T00:00:00Z"));
  assert.equal(Number(after.advisories[0].withdrawn_time), Date.parse("2031-01-01T00:00:00Z"));
});

test("bad inputs are reported with their file and JSON path and skipped; nothing of them is stored", async () => {
  const db = join(dir, "bad.db");
  const feed = join(dir, "bad");
  mkdirSync(feed);
  const good = original();
  writeFileSync(join(feed, "a-good.json"), JSON.stringify(good));
  writeFileSync(join(feed, "b-ecosystem.json"), JSON.stringify({ ...good, id: "BAD-1", affected: [{ ...good.affected![0], package: { ecosystem: "cargo", name: "x" } }] }));
  writeFileSync(join(feed, "c-package.json"), JSON.stringify({ name: "left-pad", version: "1.0.0" }));
  writeFileSync(join(feed, "d-version.json"), JSON.stringify({ ...good, id: "BAD-2", affected: [{ ...good.affected![0], ranges: [{ type: "SEMVER", events: [{ introduced: "v1" }] }] }] }));
  writeFileSync(join(feed, "e-huge.json"), `{"id":"HUGE-1","modified":"2024-01-01T00:00:00Z","details":"${"a".repeat(50 * 1024 * 1024)}"}`);
  writeFileSync(
    join(dir, "f-archive.zip"),
    makeZip([
      { name: "../escape.json", data: JSON.stringify({ ...good, id: "ESCAPE-1" }) },
      { name: "feed/GOOD-2.json", data: JSON.stringify({ ...good, id: "GOOD-2" }) },
    ]),
  );
  const run = await importer(db, feed, join(dir, "f-archive.zip"));
  assert.equal(run.code, 0);
  assert.equal(run.stdout, "read 7, new 2, updated 0, unchanged 0, rejected 5\n");
  const lines = run.stderr.trim().split("\n");
  assert.equal(lines.length, 5, run.stderr);
  assert.match(lines[0], /^rejected .*b-ecosystem\.json: affected\[0\]\.package\.ecosystem: /);
  assert.match(lines[1], /^rejected .*c-package\.json: .*package manifest/);
  assert.match(lines[2], /^rejected .*d-version\.json: affected\[0\]\.ranges\[0\]\.events\[0\]\.introduced: /);
  assert.match(lines[3], /^rejected .*e-huge\.json: the record is \d+ bytes; at most 8388608 bytes/);
  assert.match(lines[4], /^rejected .*f-archive\.zip!\.\.\/escape\.json: refused: the entry's name is unsafe/);
  assert.deepEqual((await rows(db)).records.map((r) => r.uid), ["GOOD-2", RECORD]);
});

test("--strict stops at the first refused record and exits 1; a missing path imports nothing and exits 2", async () => {
  const db = join(dir, "strict.db");
  const feed = join(dir, "strict");
  mkdirSync(feed);
  writeFileSync(join(feed, "a.json"), JSON.stringify(original()));
  writeFileSync(join(feed, "b.json"), "{ not json");
  writeFileSync(join(feed, "c.json"), JSON.stringify({ ...original(), id: "LATER-1" }));
  const strict = await importer(db, "--strict", feed);
  assert.equal(strict.code, 1);
  assert.equal(strict.stdout, "read 2, new 0, updated 0, unchanged 0, rejected 1\n");
  assert.match(strict.stderr, /rejected .*b\.json: not JSON/);
  assert.match(strict.stderr, /--strict: stopped at a refused record/);
  assert.deepEqual((await rows(db)).records, [], "the batch in progress was not written");

  const missing = await importer(db, feed, join(dir, "no-such-feed"));
  assert.equal(missing.code, 2);
  assert.match(missing.stderr, /no-such-feed: no such file or directory/);
  assert.deepEqual((await rows(db)).records, [], "nothing read when one path is wrong");
  const none = await importer(db);
  assert.equal(none.code, 2);
  assert.match(none.stderr, /give at least one/);
});
