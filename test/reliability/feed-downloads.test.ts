// The temporary downloads of advisory feed syncs, listed in the temporary folder (`TMPDIR`) of
// `serve` and `advisories sync`: gone after a success and after a failure, gone after a stop
// (SIGTERM while a download trickles); a SIGKILL mid-download leaves its folder, and the next
// process to start removes it (a crash loop left one 700 MB download per crash), while the folders
// of processes still running and those of other hosts are kept.
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { hostname, tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { startChildServer, type ChildServer } from "../support/child-server.js";
import { advisoriesSync, feedDownloads } from "../support/feed-files.js";
import { sampleRecords, startFeedServer, type FeedServer } from "../support/osv-feed-server.js";
import { waitFor } from "../support/wait-for.js";

const dir = mkdtempSync(join(tmpdir(), "platform-api-feed-downloads-"));
const tmp = join(dir, "tmp");
mkdirSync(tmp);
/** This host's name as download folders carry it. */
const host = hostname().replace(/[^A-Za-z0-9.-]/g, "_").slice(0, 63);

describe("temporary feed downloads", () => {
  let good: FeedServer;
  let slow: FeedServer;
  const servers: ChildServer[] = [];
  /** `serve` syncing `feed` of the slow server (its answers trickle), downloads in `tmp`. */
  const serveSlow = async (feed: string) => {
    const server = await startChildServer({
      db: join(dir, "serve.db"),
      registryDir: join(dir, "registry"),
      args: ["--advisory-feed", feed, "--allow-http-feeds", "--allow-private-feeds"],
      env: { TMPDIR: tmp, ADVISORY_FEEDS: "" },
    });
    servers.push(server);
    return server;
  };
  /** The download folder that is not one of `known`, once there is one. */
  const newFolder = (known: string[]) => waitFor("a new download folder", () => feedDownloads(tmp).find((name) => !known.includes(name)));

  before(async () => {
    good = await startFeedServer(sampleRecords());
    slow = await startFeedServer(sampleRecords());
    slow.fault = "drip";
  });
  after(async () => {
    for (const server of servers) if (server.child.exitCode === null && server.child.signalCode === null) server.child.kill("SIGKILL");
    await Promise.all(servers.map((s) => s.exit));
    await good?.close();
    await slow?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  test("none is left after a sync that succeeded or failed (advisories sync)", async () => {
    const sync = () => advisoriesSync(tmp, ["--feed", good.folderUrl, "--allow-http-feeds", "--allow-private-feeds", "--db", join(dir, "cli.db")]);
    const done = await sync();
    assert.equal(done.code, 0, done.stderr);
    assert.deepEqual(feedDownloads(tmp), []);
    good.fault = "cut";
    good.publish();
    const failed = await sync();
    good.fault = undefined;
    assert.equal(failed.code, 1, failed.stderr);
    assert.deepEqual(feedDownloads(tmp), []);
  });

  test("none is left after serve stops during a download (SIGTERM)", async () => {
    const server = await serveSlow(slow.folderUrl);
    await newFolder([]);
    server.child.kill("SIGTERM");
    assert.deepEqual(await server.exit, { code: 0, signal: null });
    assert.deepEqual(feedDownloads(tmp), []);
  });

  test("a SIGKILL mid-download leaves its folder, which the next process to start removes; running processes' and other hosts' are kept", async () => {
    const killed = await serveSlow(slow.folderUrl);
    const stale = await newFolder([]);
    killed.child.kill("SIGKILL");
    await killed.exit;
    assert.deepEqual(feedDownloads(tmp), [stale], "the killed process left its download");
    // A folder of this test's process (running) and one of another host sharing the folder.
    const running = `platform-api-feed-${host}-${process.pid}-0123abcd-AbCdEf`;
    const elsewhere = "platform-api-feed-elsewhere.example-1-0123abcd-AbCdEf";
    for (const name of [running, elsewhere]) mkdirSync(join(tmp, name));

    // Another feed: the killed process holds the first one's lease until it expires.
    const next = await serveSlow(slow.archiveUrl);
    await waitFor("the stale folder to be removed", () => !feedDownloads(tmp).includes(stale));
    const own = await newFolder([running, elsewhere]);
    assert.ok(own.startsWith(`platform-api-feed-${host}-${next.child.pid}-`), own);
    assert.deepEqual(feedDownloads(tmp).sort(), [elsewhere, own, running].sort());

    const cli = await advisoriesSync(tmp, ["--feed", good.folderUrl, "--allow-http-feeds", "--allow-private-feeds", "--db", join(dir, "cli.db")]);
    assert.equal(cli.code, 0, cli.stderr);
    assert.deepEqual(feedDownloads(tmp).sort(), [elsewhere, own, running].sort(), "advisories sync keeps a running server's download");
    next.child.kill("SIGTERM");
    await next.exit;
    assert.deepEqual(feedDownloads(tmp).sort(), [elsewhere, running].sort());
  });
});
