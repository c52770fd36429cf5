// A folder feed's `modified_id.csv` from a misbehaving upstream, on SQLite and PostgreSQL: one
// line of 50 MB (700 MB killed the process: readline's RangeError, uncaught) fails that feed's
// sync with an error naming the line's limit, recorded, logged and counted, while `serve` lives
// on; `advisories sync` fails the same way without its peak memory growing by the line. An index
// of 1,200,000 lines is read as a stream: down to the cursor it costs a few lines' memory, and more
// lines than the bound newer than the cursor fail the sync before any record is fetched (every
// line was held in an array and a Map: 428 MB for 1 M lines). The temporary downloads are gone
// after each. `RELIABILITY_FEED_LINE_MB` and `RELIABILITY_FEED_INDEX_LINES` scale them up.
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { MODIFIED_IDS_LIMITS } from "../../src/engines/advisories/osv/modified-ids.js";
import { openStore } from "../../src/server/open-store.js";
import { feedRows } from "../../src/domains/vulnerabilities/store/feeds.js";
import { startChildServer, type ChildServer } from "../support/child-server.js";
import { dropFresh, testDatabases } from "../support/databases.js";
import { advisoriesSync, feedDownloads, secondsBefore, writeLines, writeLongLine } from "../support/feed-files.js";
import { sampleRecords, startFeedServer, type FeedServer } from "../support/osv-feed-server.js";
import { sampleSum, scrape } from "../support/prometheus-text.js";
import { waitFor } from "../support/wait-for.js";

const LINE_MB = Number(process.env.RELIABILITY_FEED_LINE_MB ?? 50);
const INDEX_LINES = Number(process.env.RELIABILITY_FEED_INDEX_LINES ?? 1_200_000);
/** The newest `modified` of the samples: the folder's cursor after it was first synced. */
const CURSOR = "2026-07-17T15:52:38Z";
/** Three samples made newer than the cursor: the head of the long index. */
const NEWER = ["RUSTSEC-2016-0001", "RUSTSEC-2016-0002", "RUSTSEC-2017-0002"];
const NEWER_TIMES = ["2031-01-01T00:00:03Z", "2031-01-01T00:00:02Z", "2031-01-01T00:00:01Z"];

const dir = mkdtempSync(join(tmpdir(), "platform-api-feed-index-"));
const longLine = join(dir, "long-line.csv");
const headThenOld = join(dir, "head-then-old.csv");
const allNewer = join(dir, "all-newer.csv");

before(async () => {
  assert.ok(INDEX_LINES > MODIFIED_IDS_LIMITS.maxLines, "RELIABILITY_FEED_INDEX_LINES must be over the bound");
  await writeLongLine(longLine, LINE_MB * 1024 * 1024);
  // Three lines newer than the cursor, then INDEX_LINES older ones: reading stops at the fourth.
  await writeLines(headThenOld, INDEX_LINES + 3, (i) => (i < 3 ? `${NEWER_TIMES[i]},${NEWER[i]}` : `${secondsBefore(CURSOR, i)},FAKE-${i}`));
  // All newer than the cursor the head leaves (2031-01-01T00:00:03Z).
  await writeLines(allNewer, INDEX_LINES, (i) => `${secondsBefore("2032-01-01T00:00:00Z", i)},FAKE-${i}`);
});
after(() => rmSync(dir, { recursive: true, force: true }));

for (const database of await testDatabases()) {
  describe(`a folder feed's index from a misbehaving upstream, on ${database.name}`, { skip: database.skip }, () => {
    const tmp = join(dir, `tmp-${database.name}`);
    let db: string;
    let feed: FeedServer;
    /** `advisories sync` of the folder feed on `db`, downloads in `tmp`. */
    const sync = () => advisoriesSync(tmp, ["--feed", feed.folderUrl, "--allow-http-feeds", "--allow-private-feeds", "--db", db]);
    let baselineMiB = 0;

    before(async () => {
      mkdirSync(tmp);
      db = database.name === "sqlite" ? join(dir, "feeds.db") : await database.fresh();
      feed = await startFeedServer(sampleRecords());
    });
    after(async () => {
      await feed?.close();
      await dropFresh(db);
    });

    test(`a ${LINE_MB} MB line fails the feed's sync with the limit named (recorded, logged, counted); serve lives on; its download is deleted`, async () => {
      feed.indexFile = longLine;
      feed.publish();
      let server: ChildServer | undefined;
      try {
        server = await startChildServer({
          db,
          registryDir: join(dir, `registry-${database.name}`),
          logLevel: "info",
          args: ["--advisory-feed", feed.folderUrl, "--allow-http-feeds", "--allow-private-feeds"],
          env: { TMPDIR: tmp, ADVISORY_FEEDS: "" },
        });
        const child = server;
        const logged = await waitFor(
          "the sync's failure in the log",
          () => {
            assert.equal(child.child.exitCode, null, `serve exited: ${child.stderr().slice(-2000)}`);
            return child.stdout().split("\n").find((l) => l.includes('"msg":"advisory feed sync failed"'));
          },
          120_000,
        );
        const limit = new RegExp(`/osv/modified_id\\.csv:1: the line is longer than ${MODIFIED_IDS_LIMITS.maxLineBytes} bytes`);
        assert.match((JSON.parse(logged) as { error: string }).error, limit);
        const store = await openStore(db);
        try {
          const [row] = await feedRows(store.db, [feed.folderUrl]);
          assert.match(row.last_error, limit);
          assert.equal(row.failures, 1);
        } finally {
          await store.close();
        }
        const metricsUrl = (JSON.parse(child.stdout().split("\n").find((l) => l.includes('"msg":"metrics"'))!) as { url: string }).url;
        const failures = sampleSum((await scrape(Number(new URL(metricsUrl).port))).samples, "advisory_feed_failures_total", { feed: feed.folderUrl });
        assert.equal(failures, 1);
        assert.equal(child.child.exitCode, null, `serve exited: ${child.stderr()}`);
        assert.equal((await fetch(`${child.apiUrl}/readyz`)).status, 200);
        assert.deepEqual(feedDownloads(tmp), []);
      } finally {
        if (server && server.child.exitCode === null) {
          server.child.kill("SIGTERM");
          await server.exit;
        }
      }
    });

    test(`advisories sync fails on the ${LINE_MB} MB line (exit 1, the limit named) with its peak memory not grown by it`, async () => {
      feed.indexFile = undefined;
      feed.publish();
      const baseline = await sync();
      assert.equal(baseline.code, 0, baseline.stderr);
      assert.match(baseline.stdout, /: read 32, new 32, updated 0, unchanged 0, rejected 0\n$/);
      baselineMiB = baseline.rssMiB;

      feed.indexFile = longLine;
      feed.publish();
      const run = await sync();
      assert.equal(run.code, 1, run.stderr);
      assert.ok(run.rssMiB - baselineMiB < 64, `peak RSS ${run.rssMiB.toFixed(0)} MiB, ${baselineMiB.toFixed(0)} MiB for the samples`);
      assert.match(run.stderr, new RegExp(`modified_id\\.csv:1: the line is longer than ${MODIFIED_IDS_LIMITS.maxLineBytes} bytes \\(the limit of one line\\); nothing of it was written`));
      assert.deepEqual(feedDownloads(tmp), []);
      process.stderr.write(`# ${database.name}: peak RSS of advisories sync: ${baselineMiB.toFixed(0)} MiB for the samples, ${run.rssMiB.toFixed(0)} MiB refusing a ${LINE_MB} MB line (${run.ms} ms)\n`);
    });

    test(`an index of ${INDEX_LINES} lines is read as a stream down to the cursor; more than ${MODIFIED_IDS_LIMITS.maxLines} newer lines fail before any record is fetched`, async () => {
      for (const [i, id] of NEWER.entries()) feed.records.set(id, { ...feed.records.get(id)!, modified: NEWER_TIMES[i] });
      feed.indexFile = headThenOld;
      feed.publish();
      const from = feed.requests.length;
      const head = await sync();
      assert.equal(head.code, 0, head.stderr);
      assert.equal(head.stdout, `${feed.folderUrl}: read 3, new 0, updated 3, unchanged 0, rejected 0\n`);
      assert.deepEqual(feed.requests.slice(from).map((r) => r.path).sort(), ["/osv/modified_id.csv", ...NEWER.map((id) => `/osv/${id}.json`)].sort());
      assert.ok(head.rssMiB - baselineMiB < 64, `peak RSS ${head.rssMiB.toFixed(0)} MiB, ${baselineMiB.toFixed(0)} MiB for the samples`);

      feed.indexFile = allNewer;
      feed.publish();
      const next = feed.requests.length;
      const run = await sync();
      assert.equal(run.code, 1, run.stderr);
      assert.ok(run.rssMiB - baselineMiB < 64, `peak RSS ${run.rssMiB.toFixed(0)} MiB, ${baselineMiB.toFixed(0)} MiB for the samples`);
      const bound = MODIFIED_IDS_LIMITS.maxLines;
      assert.match(run.stderr, new RegExp(`modified_id\\.csv: more than ${bound} lines newer than ${NEWER_TIMES[0]} \\(at most ${bound} are read in one sync\\); nothing of it was written`));
      assert.deepEqual(feed.requests.slice(next).map((r) => r.path), ["/osv/modified_id.csv"], "no record fetched");
      assert.deepEqual(feedDownloads(tmp), []);
      const store = await openStore(db);
      try {
        assert.equal((await feedRows(store.db, [feed.folderUrl]))[0].cursor, NEWER_TIMES[0], "the cursor stays");
      } finally {
        await store.close();
      }
      process.stderr.write(`# ${database.name}: peak RSS of advisories sync: ${baselineMiB.toFixed(0)} MiB for the samples, ${head.rssMiB.toFixed(0)} MiB down to the cursor of ${INDEX_LINES + 3} lines (${head.ms} ms), ${run.rssMiB.toFixed(0)} MiB refusing ${INDEX_LINES} newer lines (${run.ms} ms)\n`);
    });
  });
}
