// Advisory feeds that trickle or never end, on SQLite and PostgreSQL. A download that gets one
// byte every 2 s is cut by the byte-rate floor within a window of it, long before its deadline; one
// fast enough for the floor but endless is cut by its deadline. A slow feed configured first holds
// back only itself: the good feed after it is fetched and imported within seconds while the slow
// one still trickles (before: the good feed waited for the slow one's deadline, fetched 0 times in
// 60 s). `advisories sync` fetches its feeds at once and takes the deadline and the floor as flags.
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { defaultAdvisoryFeedsConfig, type AdvisoryFeedsConfig } from "../../src/config.js";
import { openStore, type Store } from "../../src/server/open-store.js";
import { syncAdvisoryFeed, type FeedSyncReport } from "../../src/domains/vulnerabilities/feed-sync.js";
import { feedPolicy } from "../../src/domains/vulnerabilities/feed-worker.js";
import { dropFresh, testDatabases } from "../support/databases.js";
import { advisoriesSync } from "../support/feed-files.js";
import { sampleRecords, startFeedServer, type FeedServer } from "../support/osv-feed-server.js";
import { startTestServer, type TestServer } from "../support/test-server.js";
import { waitFor } from "../support/wait-for.js";

const dir = mkdtempSync(join(tmpdir(), "platform-api-feed-slow-"));
after(() => rmSync(dir, { recursive: true, force: true }));

const loose: AdvisoryFeedsConfig = { ...defaultAdvisoryFeedsConfig, allowHttp: true, allowPrivateAddresses: true };
const failure = (report: FeedSyncReport) => {
  assert.equal(report.result, "failed", JSON.stringify(report));
  return report.result === "failed" ? report.error : "";
};

for (const database of await testDatabases()) {
  describe(`slow advisory feeds on ${database.name}`, { skip: database.skip }, () => {
    let url: string;
    let store: Store;
    let good: FeedServer;
    let slow: FeedServer;
    const syncOnce = (feed: string, config: Partial<AdvisoryFeedsConfig>) =>
      syncAdvisoryFeed(store.db, feed, { policy: feedPolicy({ ...loose, ...config }), holder: "test", leaseMs: 60_000, intervalMs: 60_000, force: true });

    before(async () => {
      url = await database.fresh();
      store = await openStore(url);
      good = await startFeedServer(sampleRecords());
      slow = await startFeedServer(sampleRecords());
    });
    after(async () => {
      await slow?.close();
      await good?.close();
      await store?.close();
      await dropFresh(url);
    });

    test("one byte every 2 s is cut by the rate floor within one window, long before the deadline", async () => {
      slow.fault = "drip";
      slow.publish();
      const started = Date.now();
      const error = failure(await syncOnce(slow.folderUrl, { timeoutMs: 20_000, minBytesPerSecond: 1024, rateWindowMs: 1_000 }));
      const ms = Date.now() - started;
      assert.match(error, /modified_id\.csv sent \d bytes in 1000 ms, less than the floor of 1024 bytes per second/);
      assert.ok(ms < 4_000, `cut after ${ms} ms`);
    });

    test("an endless body above the floor is cut by the deadline", async () => {
      slow.fault = "endless";
      slow.publish();
      const started = Date.now();
      const error = failure(await syncOnce(slow.archiveUrl, { timeoutMs: 2_000, minBytesPerSecond: 1024, rateWindowMs: 500 }));
      const ms = Date.now() - started;
      assert.match(error, /all\.zip did not finish within 2000 ms/);
      assert.ok(ms >= 1_900 && ms < 6_000, `cut after ${ms} ms`);
    });

    test("a slow feed configured first does not hold back the good feed after it", async () => {
      slow.fault = "drip";
      slow.publish();
      const from = slow.requests.length;
      let server: TestServer | undefined;
      const serverDb = await database.fresh();
      try {
        // No floor and a long deadline: only the feeds' independence lets the good one through.
        server = await startTestServer({
          dbUrl: serverDb,
          advisoryFeeds: { ...loose, urls: [slow.folderUrl, good.archiveUrl], intervalMs: 60_000, timeoutMs: 60_000, minBytesPerSecond: 0 },
        });
        const running = server;
        const stored = async () => Number((await running.store.db.selectFrom("osv_records").select((eb) => eb.fn.countAll().as("n")).executeTakeFirstOrThrow()).n);
        const trickling = await waitFor("the slow feed's fetch", async () => slow.requests.slice(from).find((r) => r.path === "/osv/modified_id.csv"), 15_000);
        await waitFor("the good feed's import", async () => (await stored()) === 32, 15_000);
        const ms = Date.now() - trickling.start;
        assert.ok(ms < 5_000, `the good feed was imported ${ms} ms after the slow one's fetch began`);
        assert.equal(trickling.end, 0, "the slow feed still trickles");
        process.stderr.write(`# ${database.name}: the good feed imported ${ms} ms after the slow feed configured before it began to trickle\n`);
      } finally {
        await server?.close();
        await dropFresh(serverDb);
      }
    });

    test("advisories sync fetches its feeds at once, within --advisory-fetch-timeout; bad values are usage errors", { skip: database.name !== "sqlite" && "the command line is the same on both" }, async () => {
      slow.fault = "drip";
      slow.publish();
      const from = { slow: slow.requests.length, good: good.requests.length };
      const tmp = mkdtempSync(join(dir, "tmp-"));
      const feeds = ["--feed", slow.folderUrl, "--feed", good.archiveUrl, "--allow-http-feeds", "--allow-private-feeds", "--db", join(dir, "cli.db")];
      const run = await advisoriesSync(tmp, [...feeds, "--advisory-fetch-timeout", "3s", "--advisory-fetch-min-rate", "0"]);
      assert.equal(run.code, 1, run.stderr);
      assert.equal(run.stdout, `${good.archiveUrl}: read 32, new 32, updated 0, unchanged 0, rejected 0\n`);
      assert.match(run.stderr, /modified_id\.csv did not finish within 3000 ms; nothing of it was written/);
      const [slowRequest] = slow.requests.slice(from.slow);
      const [goodRequest] = good.requests.slice(from.good);
      assert.ok(goodRequest.end < slowRequest.end - 1_000, "the good feed was fetched while the slow one trickled");

      for (const [flag, value, message] of [
        ["--advisory-fetch-min-rate", "fast", /--advisory-fetch-min-rate: "fast" is not a size/],
        ["--advisory-fetch-timeout", "500", /--advisory-fetch-timeout: "500" is not a duration/],
      ] as const) {
        const refused = await advisoriesSync(tmp, [...feeds, flag, value]);
        assert.equal(refused.code, 2, refused.stderr);
        assert.match(refused.stderr, message);
      }
    });
  });
}
