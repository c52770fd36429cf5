import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, truncateSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { after, test } from "node:test";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import yauzl from "yauzl";
import { collectBounded, readFileBounded } from "../../src/engines/advisories/osv/bounded-read.js";
import { OsvFeedError, OsvRecordError } from "../../src/engines/advisories/osv/errors.js";
import { readOsvFeed, type FeedEntry, type FeedInput } from "../../src/engines/advisories/osv/feed.js";
import { makeZip } from "../support/zip-writer.js";

const MiB = 1024 * 1024;
const root = mkdtempSync(join(tmpdir(), "osv-feed-"));
after(() => rmSync(root, { recursive: true, force: true }));

setFlagsFromString("--expose-gc");
const gc = runInNewContext("gc") as () => void;

const record = (id: string, modified = "2024-01-01T00:00:00Z") => JSON.stringify({ id, modified, affected: [{ package: { ecosystem: "npm", name: id.toLowerCase() } }] });

function write(path: string, content: string | Buffer): string {
  mkdirSync(resolve(path, ".."), { recursive: true });
  writeFileSync(path, content);
  return path;
}

async function collect(paths: string[], options = {}): Promise<FeedEntry[]> {
  const entries: FeedEntry[] = [];
  for await (const entry of readOsvFeed(paths, options)) entries.push(entry);
  return entries;
}

/** One line per entry: the source relative to the test folder, and the record id or the error kind. */
function summary(entries: FeedEntry[]): string[] {
  return entries.map((e) => {
    const source = e.source.slice(root.length + 1);
    assert.ok((e.record === undefined) !== (e.error === undefined), source);
    if (e.record) return `${source} ${e.record.id}`;
    return `${source} ${e.error instanceof OsvRecordError ? e.error.kind : "feed-error"}`;
  });
}

test("a directory is read depth first in name order, .json files only, hidden folders skipped", async () => {
  const dir = join(root, "tree");
  write(join(dir, "b", "2.json"), record("B-2"));
  write(join(dir, "a.json"), record("A-0"));
  write(join(dir, "a", "1.json"), record("A-1"));
  write(join(dir, "a", "0.JSON"), record("A-00"));
  write(join(dir, "Z.json"), record("Z-0"));
  write(join(dir, "README.md"), "# not a record");
  write(join(dir, "c", "all.zip"), makeZip([{ name: "x.json", data: record("X-1") }]));
  write(join(dir, ".git", "objects.json"), record("GIT-1"));
  write(join(dir, ".hidden.json"), record("HIDDEN-1"));
  write(join(dir, "m", "bad.json"), '{"id": "M-1", "modified": "soon"}');
  write(join(dir, "m", "sbom.json"), '{"bomFormat": "CycloneDX"}');
  symlinkSync(join(dir, "a.json"), join(dir, "n-link.json"));
  symlinkSync(join(dir, "b"), join(dir, "o-dirlink"));
  const expected = [
    "tree/Z.json Z-0",
    "tree/a/0.JSON A-00",
    "tree/a/1.json A-1",
    "tree/a.json A-0",
    "tree/b/2.json B-2",
    "tree/m/bad.json invalid",
    "tree/m/sbom.json not-osv",
    "tree/n-link.json A-0",
  ];
  assert.deepEqual(summary(await collect([dir])), expected);
  assert.deepEqual(summary(await collect([dir])), expected, "the same order every time");
  const [bad] = (await collect([join(dir, "m", "bad.json")])).map((e) => e.error);
  assert.equal(bad?.message, `${join(dir, "m", "bad.json")}: modified: "soon" is not an RFC 3339 date-time (like 2024-01-31T12:00:00Z)`);
});

test("inputs are read in the order given; files, directories and archives mix", async () => {
  const file = write(join(root, "mix", "one.json"), record("ONE-1"));
  const dir = join(root, "mix", "dir");
  write(join(dir, "two.json"), record("TWO-1"));
  const zip = write(join(root, "mix", "three.zip"), makeZip([{ name: "three.json", data: record("THREE-1") }]));
  const inputs: FeedInput[] = [];
  const entries = await collect([zip, file, dir], { onInput: (input: FeedInput) => inputs.push(input) });
  assert.deepEqual(summary(entries), ["mix/three.zip!three.json THREE-1", "mix/one.json ONE-1", "mix/dir/two.json TWO-1"]);
  assert.deepEqual(inputs, [
    { path: zip, kind: "zip", entries: 1 },
    { path: file, kind: "file" },
    { path: dir, kind: "directory" },
  ]);
});

test("a missing path, or one that is no .json, .zip or directory, fails before anything is read", async () => {
  const good = write(join(root, "args", "good.json"), record("GOOD-1"));
  const text = write(join(root, "args", "notes.txt"), "hello");
  for (const [paths, reason] of [
    [[good, join(root, "args", "missing.json")], /missing\.json: no such file or directory$/],
    [[good, text], /notes\.txt: not a \.json file, a \.zip file or a directory$/],
  ] as const) {
    const feed = readOsvFeed(paths);
    await assert.rejects(feed.next(), (e: unknown) => e instanceof OsvFeedError && reason.test(e.message));
  }
});

test("a zip archive: its .json entries in order; unsafe names, oversized, lying and non-JSON entries refused one by one", async () => {
  const zip = write(
    join(root, "z", "all.zip"),
    makeZip([
      { name: "GHSA-1.json", data: record("GHSA-1") },
      { name: "../evil.json", data: record("EVIL-1") },
      { name: "/etc/abs.json", data: record("EVIL-2") },
      { name: "sub\\..\\..\\win.json", data: record("EVIL-3") },
      { name: "PYSEC-1.json", data: record("PYSEC-1"), method: "store" },
      { name: "big.json", data: `${record("BIG-1")}${" ".repeat(5000)}` },
      { name: "lies.json", data: `${record("LIE-1")}${" ".repeat(3000)}`, declaredSize: 100 },
      { name: "garbage.json", data: "this is not JSON" },
      { name: "README.txt", data: "skipped" },
      { name: "folder/", data: "", method: "store" },
      { name: "__MACOSX/._GO-1.json", data: Buffer.from([0, 5, 22, 7]) },
      { name: "folder/GO-1.json", data: record("GO-1") },
    ]),
  );
  const entries = await collect([zip], { maxRecordBytes: 4096 });
  assert.deepEqual(summary(entries), [
    "z/all.zip!GHSA-1.json GHSA-1",
    "z/all.zip!../evil.json unsafe-name",
    "z/all.zip!/etc/abs.json unsafe-name",
    "z/all.zip!sub/../../win.json unsafe-name",
    "z/all.zip!PYSEC-1.json PYSEC-1",
    "z/all.zip!big.json too-large",
    "z/all.zip!lies.json unreadable",
    "z/all.zip!garbage.json not-json",
    "z/all.zip!folder/GO-1.json GO-1",
  ]);
  const messages = entries.filter((e) => e.error).map((e) => e.error!.message.slice(root.length + 1));
  assert.deepEqual(messages.slice(0, 3), [
    "z/all.zip!../evil.json: refused: the entry's name is unsafe (invalid relative path: ../evil.json)",
    "z/all.zip!/etc/abs.json: refused: the entry's name is unsafe (absolute path: /etc/abs.json)",
    "z/all.zip!sub/../../win.json: refused: the entry's name is unsafe (invalid relative path: sub/../../win.json)",
  ]);
  assert.match(messages[3], /big\.json: the record is 5\d{3} bytes; at most 4096 bytes, the limit for one record$/);
  assert.match(messages[4], /lies\.json: cannot read the entry: too many bytes in the stream/);
});

test("yauzl on its own refuses a whole archive at its first unsafe name (why names are checked per entry)", async () => {
  const zip = write(join(root, "z", "unsafe.zip"), makeZip([{ name: "../evil.json", data: "{}" }, { name: "ok.json", data: "{}" }]));
  const error = await new Promise<Error>((done) => {
    yauzl.open(zip, { lazyEntries: true }, (err, file) => {
      if (err) return done(err);
      file.on("error", done);
      file.on("entry", () => done(new Error("an entry was read")));
      file.readEntry();
    });
  });
  assert.match(error.message, /invalid relative path: \.\.\/evil\.json/);
});

test("a file that is not a zip archive, or a corrupt one, is an error entry (records read before it stand) and the feed goes on", async () => {
  const fake = write(join(root, "bad", "fake.zip"), "not a zip at all");
  const whole = makeZip([{ name: "a.json", data: record("A-1") }, { name: "b.json", data: record("B-1") }]);
  const cut = write(join(root, "bad", "cut.zip"), Buffer.concat([whole.subarray(0, whole.length - 22 - 30), whole.subarray(whole.length - 22)]));
  const next = write(join(root, "bad", "next.json"), record("NEXT-1"));
  const entries = await collect([fake, cut, next]);
  assert.deepEqual(summary(entries), ["bad/fake.zip feed-error", "bad/cut.zip!a.json A-1", "bad/cut.zip feed-error", "bad/next.json NEXT-1"]);
  assert.match(entries[0].error!.message, /fake\.zip: not a readable zip archive: /);
  assert.match(entries[2].error!.message, /cut\.zip: the archive is corrupt: /);
});

test("a 50 MB record file is refused from its size, quickly, without reading it", async () => {
  const path = write(join(root, "huge", "huge.json"), "");
  truncateSync(path, 50 * MiB);
  gc();
  const before = process.memoryUsage().rss;
  const started = Date.now();
  const entries = await collect([path, join(root, "huge")]);
  assert.ok(Date.now() - started < 1000, `${Date.now() - started} ms`);
  assert.ok(process.memoryUsage().rss - before < 20 * MiB, `rss grew ${(process.memoryUsage().rss - before) / MiB} MiB`);
  assert.equal(entries.length, 2);
  for (const entry of entries) {
    assert.ok(entry.error instanceof OsvRecordError && entry.error.kind === "too-large");
    assert.match(entry.error.message, /huge\.json: the record is 52428800 bytes; at most 8388608 bytes, the limit for one record$/);
  }
});

test("zip bombs are bounded: an entry declaring 50 MB is refused from its header, one inflating 20 MB while declaring 1 KB stops at the lie", async () => {
  const zip = write(
    join(root, "bomb", "bomb.zip"),
    makeZip([
      { name: "declared.json", data: "{}", declaredSize: 50 * MiB },
      { name: "lying.json", data: Buffer.alloc(20 * MiB, 0x20), declaredSize: 1000 },
      { name: "fine.json", data: record("FINE-1") },
    ]),
  );
  gc();
  const before = process.memoryUsage().rss;
  const entries = await collect([zip]);
  assert.ok(process.memoryUsage().rss - before < 30 * MiB, `rss grew ${(process.memoryUsage().rss - before) / MiB} MiB`);
  assert.deepEqual(summary(entries), ["bomb/bomb.zip!declared.json too-large", "bomb/bomb.zip!lying.json unreadable", "bomb/bomb.zip!fine.json FINE-1"]);
});

test("reads are bounded by counting bytes, whatever a size claimed", async () => {
  let pulled = 0;
  async function* endless() {
    for (;;) {
      pulled++;
      yield Buffer.alloc(1024);
    }
  }
  assert.deepEqual(await collectBounded(endless(), 10_000), { tooLarge: true });
  assert.equal(pulled, 10);
  assert.deepEqual(await collectBounded([Buffer.from("ab"), Buffer.from("c")], 3), { bytes: Buffer.from("abc") });

  // Files under /proc are regular files whose size reads as 0: only counting bounds them.
  assert.deepEqual(await readFileBounded("/proc/self/smaps", 1000), { tooLarge: true });
  const status = await readFileBounded("/proc/self/status", 1_000_000);
  assert.ok("bytes" in status && status.bytes.toString().startsWith("Name:"));
  const big = write(join(root, "bounded", "big.json"), "");
  truncateSync(big, 50 * MiB);
  assert.deepEqual(await readFileBounded(big, 100_000), { tooLarge: true, size: 50 * MiB });
  const small = write(join(root, "bounded", "small.json"), "x".repeat(200_000));
  assert.equal(((await readFileBounded(small, 200_000)) as { bytes: Buffer }).bytes.length, 200_000);
});

test("streaming: 5,000 records from a directory and from a zip, with flat memory", async () => {
  const dir = join(root, "many");
  const zipped = [];
  for (let i = 0; i < 5000; i++) {
    const id = `OSV-2024-${String(i).padStart(5, "0")}`;
    const text = JSON.stringify({ ...JSON.parse(record(id)), details: "d".repeat(2000) });
    if (i % 1000 === 0) mkdirSync(join(dir, `${i / 1000}`), { recursive: true });
    writeFileSync(join(dir, `${Math.floor(i / 1000)}`, `${id}.json`), text);
    zipped.push({ name: `${id}.json`, data: text });
  }
  const zip = write(join(root, "many.zip"), makeZip(zipped));
  for (const input of [dir, zip]) {
    const heap: number[] = [];
    let count = 0;
    let last = "";
    for await (const entry of readOsvFeed([input])) {
      assert.ok(entry.record, entry.error?.message);
      assert.ok(entry.record.id > last, "in order");
      last = entry.record.id;
      if (++count % 1000 === 0) {
        gc();
        heap.push(process.memoryUsage().heapUsed);
      }
    }
    assert.equal(count, 5000);
    const growth = heap[heap.length - 1] - heap[0];
    assert.ok(growth < 4 * MiB, `${input}: heap grew ${(growth / MiB).toFixed(1)} MiB over 4,000 records`);
  }
});
