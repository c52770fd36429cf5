// Advisory feeds kept current (`serve --advisory-feed`, `advisories sync`): archives and folders
// of the repository's RustSec samples served by a local feed server; conditional GETs, changes
// applied, broken downloads leaving the store as it was, one sync per feed among replicas on one
// PostgreSQL database, the policy on plain http and loopback, the CLI, the metrics, and an image's
// vulnerability report following a new advisory.
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { promisify } from "node:util";
import { defaultAdvisoryFeedsConfig } from "../../src/config.js";
import { openStore, type Store } from "../../src/server/open-store.js";
import { syncAdvisoryFeed, type FeedSyncReport } from "../../src/domains/vulnerabilities/feed-sync.js";
import { feedPolicy } from "../../src/domains/vulnerabilities/feed-worker.js";
import { feedRows, takeFeedLease } from "../../src/domains/vulnerabilities/store/feeds.js";
import { findRepoByPath } from "../../src/domains/registry/store/repos.js";
import { dropFresh, POSTGRES_URL, testDatabases } from "../support/databases.js";
import { startChildServer, type ChildServer } from "../support/child-server.js";
import { gzipLayer } from "../support/layers.js";
import { blobOf, imageOfLayers } from "../support/oci-layout.js";
import { makeCertificate, sampleRecords, startFeedServer, type FeedServer, type OsvJson } from "../support/osv-feed-server.js";
import { scrape, sampleSum } from "../support/prometheus-text.js";
import { registryClient } from "../support/registry-push.js";
import { startTestServer, type TestServer } from "../support/test-server.js";
import { BIN, inRepo } from "../support/repo.js";

const execFileAsync = promisify(execFile);
const dir = mkdtempSync(join(tmpdir(), "platform-api-feeds-"));
/** Held back from the first archive: it names `regex`, which the nickel Cargo.lock holds. */
const LATE = "RUSTSEC-2022-0013";
const databases = await testDatabases();
const postgres = databases.find((d) => d.name === "postgres" && !d.skip);

after(() => rmSync(dir, { recursive: true, force: true }));

/** The samples without LATE. */
function firstRecords(): Map<string, OsvJson> {
  const records = sampleRecords();
  records.delete(LATE);
  return records;
}

/** Every stored record's id, modified and withdrawn time: what "the store as it was" compares. */
async function snapshot(store: Store) {
  return store.db.selectFrom("osv_records").select(["uid", "modified", "withdrawn_time"]).orderBy("uid").execute();
}

async function waitFor<T>(what: string, probe: () => Promise<T | undefined | false>, ms = 15_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

const loose = { ...defaultAdvisoryFeedsConfig, allowHttp: true, allowPrivateAddresses: true, timeoutMs: 5_000 };
const syncOptions = (holder = "test") => ({ policy: feedPolicy(loose), holder, leaseMs: 10_000, intervalMs: 1_000, force: true });
const counts = (report: FeedSyncReport) => {
  assert.equal(report.result, "imported", JSON.stringify(report));
  return report.result === "imported" ? report.counts : undefined;
};

for (const database of databases) {
  describe(`advisory feed sync on ${database.name}`, { skip: database.skip }, () => {
    let store: Store;
    let url: string;
    let feed: FeedServer;

    before(async () => {
      url = await database.fresh();
      store = await openStore(url);
      feed = await startFeedServer(firstRecords());
    });
    after(async () => {
      await feed?.close();
      await store?.close();
      await dropFresh(url);
    });

    test("the first sync imports the archive; an unchanged one is a 304 (If-None-Match sent) and changes nothing", async () => {
      assert.deepEqual(counts(await syncAdvisoryFeed(store.db, feed.archiveUrl, syncOptions())), { read: 31, added: 31, updated: 0, unchanged: 0, rejected: 0 });
      const stored = await snapshot(store);
      assert.equal(stored.length, 31);
      const [row] = await feedRows(store.db, [feed.archiveUrl]);
      assert.ok(row.etag !== "" && row.last_modified !== "" && row.last_success_time > 0, JSON.stringify(row));

      const report = await syncAdvisoryFeed(store.db, feed.archiveUrl, syncOptions());
      assert.equal(report.result, "not-modified");
      const last = feed.requests.at(-1)!;
      assert.equal(last.headers["if-none-match"], row.etag);
      assert.equal(last.headers["if-modified-since"], row.last_modified);
      assert.equal(last.status, 304);
      assert.deepEqual(await snapshot(store), stored);
    });

    test("a corrupt archive and a connection cut mid-body leave the store as it was; the feed backs off", async () => {
      const stored = await snapshot(store);
      const [before] = await feedRows(store.db, [feed.archiveUrl]);
      // A change early in the archive that a streaming import would already have written.
      const changed = { ...feed.records.get("RUSTSEC-2016-0001")!, modified: "2030-01-01T00:00:00Z" };
      feed.records.set(changed.id, changed);
      feed.publish();
      for (const fault of ["corrupt", "cut"] as const) {
        feed.fault = fault;
        const report = await syncAdvisoryFeed(store.db, feed.archiveUrl, syncOptions());
        assert.equal(report.result, "failed", `${fault}: ${JSON.stringify(report)}`);
        assert.deepEqual(await snapshot(store), stored, fault);
      }
      feed.fault = undefined;
      const [row] = await feedRows(store.db, [feed.archiveUrl]);
      assert.equal(row.failures, 2);
      assert.equal(row.etag, before.etag, "the validators of the last import stay");
      assert.ok(row.last_error !== "" && row.next_attempt_time > row.last_attempt_time);
    });

    test("a changed archive is applied: a later modified replaces, a new record is added, a withdrawn one is withdrawn", async () => {
      const withdrawn = { ...feed.records.get("RUSTSEC-2020-0071")!, modified: "2030-01-02T00:00:00Z", withdrawn: "2030-01-02T00:00:00Z" };
      feed.records.set(withdrawn.id, withdrawn);
      feed.records.set(LATE, sampleRecords().get(LATE)!);
      feed.publish();
      assert.deepEqual(counts(await syncAdvisoryFeed(store.db, feed.archiveUrl, syncOptions())), { read: 32, added: 1, updated: 2, unchanged: 29, rejected: 0 });
      const rows = new Map((await snapshot(store)).map((r) => [r.uid, r]));
      assert.equal(rows.get("RUSTSEC-2016-0001")!.modified, "2030-01-01T00:00:00Z");
      assert.ok(rows.get("RUSTSEC-2020-0071")!.withdrawn_time! > 0);
      assert.ok(rows.has(LATE));
      const [row] = await feedRows(store.db, [feed.archiveUrl]);
      assert.equal(row.failures, 0);
      assert.equal(row.records_added, 1);
    });

    test("a folder feed reads modified_id.csv and fetches only the records newer than the store's", async () => {
      const folder = await startFeedServer(firstRecords());
      try {
        const first = counts(await syncAdvisoryFeed(store.db, folder.folderUrl, syncOptions()))!;
        // All 31 are stored already (from the archive), 2 of them newer there: nothing is fetched.
        assert.deepEqual(first, { read: 0, added: 0, updated: 0, unchanged: 0, rejected: 0 });
        assert.deepEqual(folder.requests.map((r) => r.path), ["/osv/modified_id.csv"]);
        const newer = { ...folder.records.get("RUSTSEC-2021-0003")!, modified: "2031-01-01T00:00:00Z", summary: "changed" };
        folder.records.set(newer.id, newer);
        folder.publish();
        assert.deepEqual(counts(await syncAdvisoryFeed(store.db, folder.folderUrl, syncOptions())), { read: 1, added: 0, updated: 1, unchanged: 0, rejected: 0 });
        assert.deepEqual(folder.requests.slice(1).map((r) => r.path), ["/osv/modified_id.csv", "/osv/RUSTSEC-2021-0003.json"]);
        assert.equal(folder.requests[1].headers["if-none-match"] !== undefined, true);
        const [row] = await feedRows(store.db, [folder.folderUrl]);
        assert.equal(row.cursor, "2031-01-01T00:00:00Z");
        assert.equal((await syncAdvisoryFeed(store.db, folder.folderUrl, syncOptions())).result, "not-modified");
      } finally {
        await folder.close();
      }
    });

    test("one holder at a time: a second is refused while the lease runs, and takes over once it expired", async () => {
      const feedUrl = "https://feeds.example/lease.zip";
      const now = Date.now();
      assert.ok(await takeFeedLease(store.db, feedUrl, "a", now, 1_000));
      assert.equal(await takeFeedLease(store.db, feedUrl, "b", now + 500, 1_000, true), undefined);
      assert.equal((await syncAdvisoryFeed(store.db, feedUrl, { ...syncOptions("b"), now: () => now + 500 })).result, "skipped");
      assert.ok(await takeFeedLease(store.db, feedUrl, "b", now + 1_001, 1_000, true), "taken over after expiry");
      assert.equal((await feedRows(store.db, [feedUrl]))[0].lease_holder, "b");
    });
  });
}

describe("the outbound policy of feeds", () => {
  let store: Store;
  let feed: FeedServer;
  before(async () => {
    store = await openStore(":memory:");
    feed = await startFeedServer(firstRecords());
  });
  after(async () => {
    await feed?.close();
    await store?.close();
  });

  test("plain http and loopback are refused without the flags, before any connection", async () => {
    const seen = feed.connections();
    const strict = { ...syncOptions(), policy: feedPolicy({ ...loose, allowHttp: false, allowPrivateAddresses: false }) };
    const http = await syncAdvisoryFeed(store.db, feed.archiveUrl, strict);
    assert.equal(http.result, "failed");
    assert.match(http.result === "failed" ? http.error : "", /plain http is not allowed: --allow-http-feeds/);
    const loopback = await syncAdvisoryFeed(store.db, feed.archiveUrl, { ...strict, policy: feedPolicy({ ...loose, allowPrivateAddresses: false }) });
    assert.match(loopback.result === "failed" ? loopback.error : "", /not a public address \(--allow-private-feeds\)/);
    const named = await syncAdvisoryFeed(store.db, feed.archiveUrl.replace("127.0.0.1", "localhost"), { ...strict, policy: feedPolicy({ ...loose, allowPrivateAddresses: false }) });
    assert.match(named.result === "failed" ? named.error : "", /not a public address/);
    assert.equal(feed.connections(), seen, "the feed saw no connection");
    assert.equal((await snapshot(store)).length, 0);
  });
});

describe("a server keeping a feed current", () => {
  let server: TestServer;
  let feed: FeedServer;
  before(async () => {
    feed = await startFeedServer(firstRecords());
    server = await startTestServer({ advisoryFeeds: { ...loose, urls: [feed.archiveUrl], intervalMs: 1_000 } });
  });
  after(async () => {
    if (!closed) await server?.close();
    else {
      await server.store.close();
      rmSync(server.contentDir, { recursive: true, force: true });
    }
    await feed?.close();
  });
  let closed = false;

  test("an image's vulnerability report changes when the feed adds an advisory for a package it holds", async () => {
    await waitFor("the first sync", async () => (await snapshot(server.store)).length === 31);
    const token = (await server.server.tokens.issue({ subject: server.ownerUid, audience: "http://registry.test" })).token;
    const lock = readFileSync(inRepo("test/fixtures/inventory/nickel.Cargo.lock"));
    const layer = blobOf(await gzipLayer([{ name: "srv/app/Cargo.lock", content: lock }]), "application/vnd.oci.image.layer.v1.tar+gzip");
    const image = imageOfLayers("amd64", [layer]);
    await registryClient([`http://127.0.0.1:${server.registryPort}`], token).pushImage("acme/app", "latest", image);
    const repo = (await findRepoByPath(server.store.db, "acme", "app"))!;
    const report = async () => {
      await server.server.workers.get("reports")!.drain!();
      const res = await fetch(`http://127.0.0.1:${server.apiPort}/registry/v2/repos/${repo.uid}/digests/${image.manifest.digest}/vulnerabilityReport`, { headers: { authorization: `Bearer ${server.ownerToken}` } });
      assert.equal(res.status, 200);
      return (await res.json()) as { status: string; vulnerabilities?: Array<{ advisoryId: string; package: string }> };
    };
    const before = await report();
    assert.equal(before.status, "STATUS_DONE");
    assert.ok(!before.vulnerabilities?.some((v) => v.advisoryId === LATE));

    feed.records.set(LATE, sampleRecords().get(LATE)!);
    feed.publish();
    const afterSync = await waitFor("the report to name the new advisory", async () => {
      const r = await report();
      return r.vulnerabilities?.some((v) => v.advisoryId === LATE && v.package.startsWith("pkg:cargo/regex@")) && r;
    });
    assert.ok(afterSync);
    // The report can name the advisory before the sync that wrote it has logged and counted itself.
    await waitFor("one log line for the sync", async () => server.logs.some((l) => l.includes('"msg":"advisory feed synced"') && l.includes('"added":1')));
  });

  test("the metrics show each feed's syncs and records", async () => {
    const { samples } = await scrape(server.metricsPort);
    const feedLabel = { feed: feed.archiveUrl };
    assert.ok(sampleSum(samples, "advisory_feed_last_success_timestamp_seconds", feedLabel) > Date.now() / 1000 - 60);
    assert.ok(sampleSum(samples, "advisory_feed_last_attempt_timestamp_seconds", feedLabel) > 0);
    assert.equal(sampleSum(samples, "advisory_feed_records_total", { ...feedLabel, outcome: "new" }), 32);
    assert.ok(sampleSum(samples, "advisory_feed_syncs_total", { ...feedLabel, result: "imported" }) >= 2);
    assert.equal(sampleSum(samples, "advisory_feed_failures_total", feedLabel), 0);
  });

  test("a feed that hangs blocks neither the API nor /readyz; its failure is counted", async () => {
    feed.fault = "hang";
    feed.records.set("RUSTSEC-2016-0001", { ...feed.records.get("RUSTSEC-2016-0001")!, modified: "2030-01-01T00:00:00Z" });
    feed.publish();
    await waitFor("a sync to hang", async () => feed.requests.some((r) => r.end === 0));
    const started = Date.now();
    const ping = await fetch(`http://127.0.0.1:${server.apiPort}/ping/v2/ping`);
    assert.equal(ping.status, 200);
    assert.equal((await fetch(`http://127.0.0.1:${server.apiPort}/readyz`)).status, 200);
    assert.ok(Date.now() - started < 2_000);
    feed.fault = "corrupt";
    // The hanging download ends at its deadline (5 s); the next attempts fail on the corrupt archive.
    await waitFor("a counted failure", async () => sampleSum((await scrape(server.metricsPort)).samples, "advisory_feed_failures_total", { feed: feed.archiveUrl }) >= 1, 20_000);
    assert.equal((await fetch(`http://127.0.0.1:${server.apiPort}/readyz`)).status, 200);
    assert.equal((await server.store.db.selectFrom("osv_records").select("modified").where("uid", "=", "RUSTSEC-2016-0001").executeTakeFirstOrThrow()).modified !== "2030-01-01T00:00:00Z", true);
  });

  test("closing the server stops a download that hangs, and counts no failure", async () => {
    const failures = () => server.logs.filter((l) => l.includes("advisory feed sync failed")).length;
    feed.fault = "hang";
    const from = feed.requests.length;
    await waitFor("a sync to hang", async () => feed.requests.slice(from).some((r) => r.end === 0), 20_000);
    const before = failures();
    const started = Date.now();
    closed = true;
    await server.server.close();
    assert.ok(Date.now() - started < 3_000, `closed in ${Date.now() - started} ms (the download's deadline is 5 s)`);
    assert.equal(failures(), before);
    const [row] = await feedRows(server.store.db, [feed.archiveUrl]);
    assert.equal(row.lease_holder, "", "the lease was given back");
  });
});

describe("serve and the CLI over https", () => {
  let feed: FeedServer;
  let ca: string;
  const env = () => ({ ...process.env, NODE_EXTRA_CA_CERTS: ca, DATABASE_URL: "", ADVISORY_FEEDS: "", METRICS_PORT: "0" });
  const cli = (...args: string[]) => execFileAsync(process.execPath, [BIN, ...args], { encoding: "utf8", timeout: 60_000, env: env() });

  before(async () => {
    const certs = await makeCertificate(dir);
    ca = certs.certPath;
    feed = await startFeedServer(firstRecords(), certs);
  });
  after(async () => {
    await feed?.close();
  });

  test("advisories sync prints the import's summary; a second run is not modified; refusals name the flag", async () => {
    const db = join(dir, "cli.db");
    const first = await cli("advisories", "sync", "--feed", feed.archiveUrl, "--allow-private-feeds", "--db", db);
    assert.equal(first.stdout, `${feed.archiveUrl}: read 31, new 31, updated 0, unchanged 0, rejected 0\n`);
    const second = await cli("advisories", "sync", "--feed", feed.archiveUrl, "--allow-private-feeds", "--db", db);
    assert.equal(second.stdout, `${feed.archiveUrl}: not modified\n`);
    await assert.rejects(cli("advisories", "sync", "--feed", feed.archiveUrl.replace("https:", "http:"), "--db", db), (e: { stderr: string; code: number }) => {
      assert.equal(e.code, 2);
      assert.match(e.stderr, /--feed: .*plain http is not allowed: --allow-http-feeds/);
      return true;
    });
    await assert.rejects(cli("advisories", "sync", "--feed", "https://127.0.0.1:1/all.zip", "--db", db), /not a public address \(--allow-private-feeds\)/);
    feed.records.set("RUSTSEC-2016-0001", { ...feed.records.get("RUSTSEC-2016-0001")!, modified: "2030-01-01T00:00:00Z" });
    feed.publish();
    feed.fault = "cut";
    await assert.rejects(cli("advisories", "sync", "--feed", feed.archiveUrl, "--allow-private-feeds", "--db", db), (e: { stderr: string; code: number }) => e.code === 1 && /nothing of it was written/.test(e.stderr));
    feed.fault = undefined;
  });

  describe("two serve processes on one PostgreSQL database", { skip: postgres ? undefined : `PostgreSQL at ${POSTGRES_URL} is unreachable` }, () => {
    let db: string;
    const servers: ChildServer[] = [];
    const serve = () =>
      startChildServer({
        db,
        registryDir: join(dir, `registry-${servers.length}`),
        logLevel: "info",
        args: ["--advisory-feed", feed.archiveUrl, "--allow-private-feeds", "--advisory-sync-interval", "1s"],
        env: { NODE_EXTRA_CA_CERTS: ca, ADVISORY_FEEDS: "" },
      });
    const stop = async (s: ChildServer) => {
      s.child.kill("SIGTERM");
      await s.exit;
    };
    before(async () => {
      db = await postgres!.fresh();
    });
    after(async () => {
      await Promise.all(servers.map(stop));
      await dropFresh(db);
    });

    test("sync a feed once between them, and a restart does not import again what is current", async () => {
      const from = feed.requests.length;
      servers.push(await serve());
      servers.push(await serve());
      const store = await openStore(db);
      try {
        await waitFor("the import", async () => (await snapshot(store)).length === 31);
        // A few intervals: every later look is a conditional GET answered 304, by one of them at a time.
        await waitFor("three more looks", async () => feed.requests.length - from >= 4);
        const seen = feed.requests.slice(from);
        assert.deepEqual(seen.filter((r) => r.status === 200).length, 1, JSON.stringify(seen.map((r) => r.status)));
        assert.ok(seen.slice(1).every((r) => r.status === 304 && r.headers["if-none-match"]), JSON.stringify(seen.map((r) => r.status)));
        assert.equal(feed.maxInFlight(), 1, "never two syncs of the feed at once");
        const logs = servers.map((s) => s.stdout().split("\n").filter((l) => l.includes('"msg":"advisory feed synced"') && l.includes('"result":"imported"')).length);
        assert.deepEqual(logs.sort(), [0, 1]);

        await Promise.all(servers.splice(0).map(stop));
        const restartedFrom = feed.requests.length;
        servers.push(await serve());
        await waitFor("a look after the restart", async () => feed.requests.length > restartedFrom);
        assert.equal(feed.requests[restartedFrom].status, 304, "the stored validators survive the restart");
        assert.equal((await snapshot(store)).length, 31);
      } finally {
        await store.close();
      }
    });
  });
});
