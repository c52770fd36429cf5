// One organization's slow or hostile images against another's report: the queue takes turns
// between organizations and keeps a slot for the others, and an image that takes longer than its
// time fails alone. The slow images are layers whose reads stall (as a decompression bomb or a
// hanging content store would hold a worker), on SQLite and PostgreSQL.
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Readable } from "node:stream";
import { after, before, describe, test } from "node:test";
import { gzipSync } from "node:zlib";
import { bootstrapOrganization } from "../../src/server/bootstrap.js";
import { startReportWorker, type ReportWorker, type ReportWorkerOptions } from "../../src/domains/registry/report-worker.js";
import { reportsOf } from "../../src/domains/registry/store/image-reports.js";
import { createLogger } from "../../src/logger.js";
import { createFileContentStore, type ContentStore } from "../../src/domains/registry/content/content-store.js";
import { importImages } from "../../src/domains/registry/import.js";
import { openStore, type Store } from "../../src/server/open-store.js";
import { dropFresh, testDatabases } from "../support/databases.js";
import { blobOf, imageOfLayers, tarOf, writeImagesLayout } from "../support/oci-layout.js";

const LAYER = "application/vnd.oci.image.layer.v1.tar+gzip";

/** Waits until `condition` holds, polling; fails after `ms`. */
async function waitFor(condition: () => Promise<boolean>, what: string, ms: number): Promise<void> {
  const started = Date.now();
  while (!(await condition())) {
    if (Date.now() - started > ms) assert.fail(`timed out after ${ms} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

for (const database of await testDatabases()) {
  describe(`report queue fairness on ${database.name}`, { skip: database.skip }, () => {
    const dir = mkdtempSync(join(tmpdir(), "platform-api-fairness-"));
    const files = createFileContentStore(join(dir, "content"));
    /** Layers whose reads stall until destroyed, and layers whose reads wait a while first. */
    const stalled = new Set<string>();
    const slow = new Map<string, number>();
    const streams: Readable[] = [];
    const content: ContentStore = {
      ...files,
      read(digest, range) {
        if (stalled.has(digest)) {
          const stream = new Readable({ read() {} });
          stream.push(Buffer.from([0x1f, 0x8b]));
          streams.push(stream);
          return stream;
        }
        const delay = slow.get(digest);
        if (delay === undefined) return files.read(digest, range);
        return Readable.from(
          (async function* () {
            await new Promise((resolve) => setTimeout(resolve, delay));
            yield* files.read(digest, range);
          })(),
        );
      },
    };
    let store: Store;
    let url: string;
    let images = 0;
    const workers: ReportWorker[] = [];

    before(async () => {
      url = await database.fresh();
      store = await openStore(url);
      await bootstrapOrganization(store, "tenant-a", Date.now());
      await bootstrapOrganization(store, "tenant-b", Date.now());
    });
    after(async () => {
      await Promise.all(workers.map((w) => w.close()));
      for (const stream of streams) stream.destroy();
      await store?.close();
      await dropFresh(url);
      rmSync(dir, { recursive: true, force: true });
    });

    /** Imports a one-layer image into `repository`, queued at `now`; returns its digest and its layer's. */
    async function push(repository: string, now: number, how: "stalled" | "normal" | number = "normal"): Promise<{ digest: string; layer: string }> {
      const n = ++images;
      const layer = blobOf(gzipSync(tarOf("var/lib/dpkg/status", Buffer.from(`Package: p${n}\nStatus: install ok installed\nVersion: 1.${n}\n`))), LAYER);
      if (how === "stalled") stalled.add(layer.digest);
      else if (typeof how === "number") slow.set(layer.digest, how);
      const layout = writeImagesLayout(join(dir, `image-${n}`), [imageOfLayers("amd64", [layer], { labels: { n: String(n) } })], `v${n}`);
      await importImages(store, { repository, paths: [layout.dir], now, content });
      return { digest: layout.top.digest, layer: layer.digest };
    }

    const statusOf = async (digest: string) => (await reportsOf(store.db, [digest])).get(digest)?.status;
    const start = (options: Partial<ReportWorkerOptions> = {}) => {
      const worker = startReportWorker({ db: store.db, content, logger: createLogger("error", () => {}), typePrefix: "dev.test", pollIntervalMs: 20, ...options });
      workers.push(worker);
      return worker;
    };

    const stop = async (worker: ReportWorker) => {
      workers.splice(workers.indexOf(worker), 1);
      await worker.close();
    };

    test("one organization's stalled images, queued first, hold no slot the other organization's report needs", { timeout: 30_000 }, async () => {
      const now = Date.now();
      const hostile = [];
      for (let i = 0; i < 3; i++) hostile.push(await push("tenant-a/bombs", now - 1000 + i, "stalled"));
      const other = await push("tenant-b/app", now);
      const worker = start();
      await waitFor(async () => (await statusOf(other.digest)) === "done", "tenant-b's report", 10_000);
      for (const image of hostile) assert.equal(await statusOf(image.digest), "pending", "tenant-a's images are still being read");
      const closing = Date.now();
      await stop(worker);
      assert.ok(Date.now() - closing < 5_000, "stopping the worker ends the stalled reads");
      const queued = await store.db.selectFrom("report_jobs").select("digest").execute();
      assert.deepEqual(queued.map((j) => j.digest).sort(), hostile.map((h) => h.digest).sort(), "given back to the queue, nothing of them written");
    });

    test("an image that takes longer than its time fails alone, with the reason", { timeout: 30_000 }, async () => {
      const stuck = await store.db.selectFrom("report_jobs").select("digest").execute();
      assert.equal(stuck.length, 3);
      const worker = start({ inventoryTimeoutMs: 300, concurrency: 4, perOrganization: 4 });
      await waitFor(async () => (await Promise.all(stuck.map((j) => statusOf(j.digest)))).every((s) => s === "failed"), "the stalled images to fail", 10_000);
      for (const job of stuck) assert.equal((await reportsOf(store.db, [job.digest])).get(job.digest)!.reason, "reading the image took longer than 0.3 s");
      await worker.drain();
      assert.equal((await store.db.selectFrom("report_jobs").select("digest").execute()).length, 0);
      await stop(worker);
    });

    test("with one slot, organizations take turns: the other organization's report is not queued behind a whole backlog", { timeout: 30_000 }, async () => {
      const now = Date.now();
      const backlog = [];
      for (let i = 0; i < 4; i++) backlog.push(await push("tenant-a/slow", now - 1000 + i, 250));
      const other = await push("tenant-b/late", now);
      const finished: string[] = [];
      const pending = new Set([...backlog.map((b) => b.digest), other.digest]);
      const worker = start({ concurrency: 1 });
      await waitFor(
        async () => {
          for (const digest of [...pending]) {
            if ((await statusOf(digest)) === "done") {
              pending.delete(digest);
              finished.push(digest === other.digest ? "b" : "a");
            }
          }
          return pending.size === 0;
        },
        "every report",
        15_000,
      );
      assert.ok(finished.indexOf("b") <= 1, `tenant-b's report came after ${finished.indexOf("b")} of tenant-a's: ${finished.join(" ")}`);
      await stop(worker);
    });
  });
}
