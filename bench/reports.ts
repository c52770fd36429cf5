import { randomBytes } from "node:crypto";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Readable } from "node:stream";
import { createGunzip, gzipSync } from "node:zlib";
import { extract as tarExtract, pack } from "tar-stream";
import { readOsvFeed } from "../src/engines/advisories/osv/feed.js";
import { startReportWorker } from "../src/domains/registry/report-worker.js";
import { replaceInventory, writeReport } from "../src/domains/registry/store/image-reports.js";
import { enqueueMatches, pendingReportJobs } from "../src/domains/registry/store/report-jobs.js";
import { importOsvFeed } from "../src/domains/vulnerabilities/osv-import.js";
import { packageOf, readImageFiles } from "../src/engines/inventory/index.js";
import { createLogger } from "../src/logger.js";
import { createFileContentStore } from "../src/domains/registry/content/content-store.js";
import { openStore } from "../src/server/open-store.js";
import { inTransaction } from "../src/store/transaction.js";

/**
 * Report figures (`npm run bench:reports`), on a SQLite file as `serve` runs it:
 * 1. inventory throughput: MB/s of a gzip'd layer read by the inventory (decompress, walk the tar,
 *    keep the package databases) next to a same-run baseline that only gunzips and walks the same
 *    tar, passes interleaved so load on the machine falls on both alike;
 * 2. report recomputation after importing 1,000 new advisories over 1,000 images: the import (which
 *    queues the images naming an advisory's package) and the worker matching them again, next to a
 *    full rescan of every image.
 * BENCH_LAYER_MB sizes the layer (uncompressed), BENCH_IMAGES and BENCH_ADVISORIES the second part.
 */
const LAYER_MB = Number(process.env.BENCH_LAYER_MB ?? 256);
const IMAGES = Number(process.env.BENCH_IMAGES ?? 1000);
const ADVISORIES = Number(process.env.BENCH_ADVISORIES ?? 1000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 4);

const dir = mkdtempSync(join(tmpdir(), "platform-api-bench-reports-"));
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

// 1. A layer of LAYER_MB: files of text-like content (compressible as real file trees are), the dpkg database at the end.
async function buildLayer(): Promise<Buffer> {
  const packer = pack();
  const chunks: Buffer[] = [];
  packer.on("data", (c: Buffer) => chunks.push(c));
  const ended = new Promise((resolve) => packer.on("end", resolve));
  // Half random (base64), half repeated text: gzip makes it about 2.5 times smaller, as it does real file trees.
  const text = Buffer.from("Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor incididunt ut labore. ".repeat(330)).subarray(0, 32 * 1024);
  for (let i = 0; i < (LAYER_MB * 1024) / 64; i++) packer.entry({ name: `usr/share/data/${i % 50}/file-${i}.txt` }, Buffer.concat([Buffer.from(randomBytes(24 * 1024).toString("base64")), text]));
  packer.entry({ name: "var/lib/dpkg/status" }, Buffer.from(Array.from({ length: 500 }, (_, i) => `Package: pkg${i}\nStatus: install ok installed\nVersion: 1.${i}-1\n`).join("\n")));
  packer.finalize();
  await ended;
  return gzipSync(Buffer.concat(chunks), { level: 6 });
}

async function baseline(layer: Buffer): Promise<number> {
  const extract = tarExtract();
  let bytes = 0;
  const feeding = Readable.from([layer]).pipe(createGunzip()).pipe(extract);
  for await (const entry of feeding) {
    bytes += entry.header.size ?? 0;
    entry.resume();
  }
  return bytes;
}

const layer = await buildLayer();
const inventoryRates: number[] = [];
const baselineRates: number[] = [];
async function inventoryPass(): Promise<void> {
  const started = performance.now();
  const files = await readImageFiles([{ digest: "sha256:bench", open: () => Readable.from([layer]) }]);
  if (!files.has("var/lib/dpkg/status")) throw new Error("the inventory missed the dpkg database");
  inventoryRates.push(layer.length / 1e6 / ((performance.now() - started) / 1000));
}
async function baselinePass(): Promise<void> {
  const started = performance.now();
  await baseline(layer);
  baselineRates.push(layer.length / 1e6 / ((performance.now() - started) / 1000));
}
// ABBA order, so neither side always runs first.
for (let round = 0; round < ROUNDS; round++) {
  if (round % 2 === 0) {
    await inventoryPass();
    await baselinePass();
  } else {
    await baselinePass();
    await inventoryPass();
  }
}
const ratio = LAYER_MB / (layer.length / 1e6);
console.log(`inventory of a ${LAYER_MB} MB layer (${(layer.length / 1e6).toFixed(1)} MB gzip'd), median of ${ROUNDS}:`);
console.log(`  inventory       ${median(inventoryRates).toFixed(1)} MB/s compressed (${(median(inventoryRates) * ratio).toFixed(0)} MB/s of tar)`);
console.log(`  gunzip + walk   ${median(baselineRates).toFixed(1)} MB/s compressed (${(median(baselineRates) * ratio).toFixed(0)} MB/s of tar)`);

// 2. 1,000 images of 60 crates each (40 from a shared pool of 400 names; every tenth image also 5 of
// the 100 crates the advisories will name), reports written.
const store = await openStore(join(dir, "bench.db"));
const pool = Array.from({ length: 400 }, (_, i) => `crate-${i}`);
const digestOf = (i: number) => `sha256:${i.toString(16).padStart(64, "0")}`;
let seed = 42;
const random = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
const inventories: Array<Set<string>> = [];
for (let i = 0; i < IMAGES; i++) {
  const names = new Set<string>();
  while (names.size < 40) names.add(pool[Math.floor(random() * pool.length)]);
  for (let j = 0; j < (i % 10 === 0 ? 15 : 20); j++) names.add(`own-${i}-${j}`);
  if (i % 10 === 0) while (names.size < 60) names.add(`vulnerable-${Math.floor(random() * 100)}`);
  await replaceInventory(store.db, digestOf(i), [...names].map((n) => packageOf(`pkg:cargo/${n}@1.${Math.floor(random() * 10)}.0`)));
  inventories.push(names);
}
await inTransaction(store.db, undefined, async (trx) => {
  for (const [i, names] of inventories.entries()) {
    await writeReport(trx, { digest: digestOf(i), status: "done", reason: "", distro: "", packages: names.size, package_source: "layers", critical: 0, high: 0, medium: 0, low: 0, unknown: 0, create_time: 1, update_time: 1 }, []);
  }
});
const feed = join(dir, "advisories");
mkdirSync(feed);
// Each advisory names one of the 100 `vulnerable-*` crates, which only every tenth image holds.
for (let i = 0; i < ADVISORIES; i++) {
  const record = {
    id: `BENCH-2026-${String(i).padStart(4, "0")}`,
    modified: "2026-11-26T00:00:00Z",
    published: "2026-11-26T00:00:00Z",
    aliases: [`CVE-2026-${10000 + i}`],
    summary: "bench advisory",
    affected: [{ package: { ecosystem: "crates.io", name: `vulnerable-${i % 100}` }, ranges: [{ type: "SEMVER", events: [{ introduced: "0" }, { fixed: `1.${(i % 9) + 1}.0` }] }] }],
    severity: [{ type: "CVSS_V3", score: "CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:H/I:N/A:N" }],
  };
  writeFileSync(join(feed, `${record.id}.json`), JSON.stringify(record));
}
const worker = () => startReportWorker({ db: store.db, content: createFileContentStore(join(dir, "content")), logger: createLogger("silent"), typePrefix: "bench", pollIntervalMs: 3_600_000, concurrency: 1 });

let started = performance.now();
await importOsvFeed(store.db, readOsvFeed([feed]));
const importMs = performance.now() - started;
const queued = await pendingReportJobs(store.db);
started = performance.now();
let w = worker();
await w.drain();
await w.close();
const matchMs = performance.now() - started;
const findings = await store.db.selectFrom("report_findings").select((eb) => eb.fn.countAll().as("n")).executeTakeFirstOrThrow();

await enqueueMatches(store.db, Array.from({ length: IMAGES }, (_, i) => digestOf(i)), Date.now());
started = performance.now();
w = worker();
await w.drain();
await w.close();
const rescanMs = performance.now() - started;

console.log(`report recomputation, ${ADVISORIES} new advisories over ${IMAGES} images of 60 packages:`);
console.log(`  import (and queueing)   ${importMs.toFixed(0)} ms`);
console.log(`  images queued           ${queued} (those holding a named crate)`);
console.log(`  re-match of those       ${matchMs.toFixed(0)} ms (${(queued / (matchMs / 1000)).toFixed(0)} reports/s), ${Number(findings.n)} findings`);
console.log(`  full rescan of all      ${rescanMs.toFixed(0)} ms (${(IMAGES / (rescanMs / 1000)).toFixed(0)} reports/s)`);
await store.close();
rmSync(dir, { recursive: true, force: true });
