import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { sql } from "kysely";
import { readOsvFeed } from "../../src/engines/advisories/osv/feed.js";
import type { FeedEntry } from "../../src/engines/advisories/osv/feed.js";
import { advisoryUid } from "../../src/domains/vulnerabilities/advisory-rows.js";
import { importOsvFeed, StrictImportError } from "../../src/domains/vulnerabilities/osv-import.js";
import { filteredAdvisories, type AdvisoryFilter } from "../../src/domains/vulnerabilities/store/advisories.js";
import { openStore, type Store } from "../../src/server/open-store.js";
import { dropFresh, testDatabases } from "../support/databases.js";
import { feedOf, osvRecord, refused } from "../support/osv-records.js";

for (const database of await testDatabases()) {
  describe(`advisory store on ${database.name}`, { skip: database.skip }, () => {
    let store: Store;
    let url: string;

    before(async () => {
      url = await database.fresh();
      store = await openStore(url);
    });
    after(async () => {
      await store?.close();
      await dropFresh(url);
    });

    const advisories = (id: string) =>
      store.db.selectFrom("advisories").selectAll().where("advisory_id", "=", id).orderBy("artifact_name").execute();
    const names = async (id: string) =>
      (await store.db.selectFrom("osv_names").select("name").where("record_uid", "=", id).orderBy("name").execute()).map((r) => r.name);

    test("a record stores its document, its names and one advisory per package; the same feed twice changes nothing", async () => {
      const record = osvRecord("TEST-2024-0001", {
        aliases: ["CVE-2024-0001", "GHSA-aaaa-bbbb-cccc", "CVE-2024-0001"],
        severity: [{ type: "CVSS_V3", score: "CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:H/I:H/A:H" }],
        affected: [
          { package: { ecosystem: "crates.io", name: "alpha" }, ranges: [{ type: "SEMVER", events: [{ introduced: "0.0.0-0" }, { fixed: "1.0.0" }] }] },
          { package: { ecosystem: "crates.io", name: "alpha" }, ranges: [{ type: "SEMVER", events: [{ introduced: "2.0.0" }, { fixed: "2.1.0" }] }] },
          { package: { ecosystem: "crates.io", name: "beta" }, versions: ["0.1.0"], severity: [{ type: "CVSS_V2", score: "AV:N/AC:L/Au:N/C:P/I:P/A:P" }] },
          { ranges: [{ type: "GIT", repo: "https://example.com/r.git", events: [{ introduced: "0" }] }] },
        ],
      });
      const first = await importOsvFeed(store.db, feedOf(record));
      assert.deepEqual(first, { read: 1, added: 1, updated: 0, unchanged: 0, rejected: 0 });
      const rows = await advisories("TEST-2024-0001");
      assert.deepEqual(rows.map((r) => r.artifact_name), ["alpha", "beta"], "one advisory per package; a package-less entry makes none");
      assert.equal(rows[0].uid, advisoryUid("TEST-2024-0001", "crates.io", "alpha"));
      assert.match(rows[0].uid, /^[0-9a-f]{40}$/);
      assert.equal(JSON.parse(rows[0].affected).length, 2, "both entries of alpha");
      assert.deepEqual(JSON.parse(rows[0].aliases), ["CVE-2024-0001", "GHSA-aaaa-bbbb-cccc"]);
      assert.equal(JSON.parse(rows[0].severity)[0].type, "CVSS_V3", "the record's severity when the entry has none");
      assert.equal(JSON.parse(rows[1].severity)[0].type, "CVSS_V2", "the entry's own severity first");
      assert.equal(Number(rows[0].create_time), Date.parse("2023-06-01T00:00:00Z"));
      assert.equal(Number(rows[0].update_time), Date.parse("2024-01-01T00:00:00Z"));
      assert.deepEqual(await names("TEST-2024-0001"), ["CVE-2024-0001", "GHSA-aaaa-bbbb-cccc", "TEST-2024-0001"]);

      const again = await importOsvFeed(store.db, feedOf(record));
      assert.deepEqual(again, { read: 1, added: 0, updated: 0, unchanged: 1, rejected: 0 });
      assert.deepEqual(await advisories("TEST-2024-0001"), rows);
    });

    test("filters: aliases only, ecosystems with their suffixes, query ignoring case with % and _ literal", async () => {
      await importOsvFeed(
        store.db,
        feedOf(
          osvRecord("FILTER-2024-0001", { aliases: ["CVE-2024-7777"], summary: "Heap OVERFLOW in Parser", affected: [{ package: { ecosystem: "Debian:12", name: "libfoo" }, versions: ["1"] }] }),
          osvRecord("FILTER-2024-0002", { summary: "100% of_requests", affected: [{ package: { ecosystem: "PyPI", name: "Foo_Bar" }, versions: ["1"] }] }),
        ),
      );
      const found = async (filter: AdvisoryFilter) =>
        (await filteredAdvisories(store.db, { uidp: { ids: [] }, ...filter }).select("advisory_id").where("advisory_id", "like", "FILTER-%").orderBy("advisory_id").execute()).map((r) => r.advisory_id);
      assert.deepEqual(await found({ aliases: ["CVE-2024-7777"] }), ["FILTER-2024-0001"]);
      assert.deepEqual(await found({ aliases: ["FILTER-2024-0001"] }), []);
      assert.deepEqual(await found({ ecosystems: ["Debian", "npm"] }), ["FILTER-2024-0001"]);
      assert.deepEqual(await found({ ecosystems: ["PyPI"] }), ["FILTER-2024-0002"]);
      assert.deepEqual(await found({ query: "overflow in" }), ["FILTER-2024-0001"], "summary, ignoring case");
      assert.deepEqual(await found({ query: "cve-2024-7777" }), ["FILTER-2024-0001"], "an alias");
      assert.deepEqual(await found({ query: "foo_b" }), ["FILTER-2024-0002"], "the package name");
      assert.deepEqual(await found({ query: "fooxb" }), [], "_ is literal");
      assert.deepEqual(await found({ query: "100%" }), ["FILTER-2024-0002"]);
      assert.deepEqual(await found({ query: "1%0" }), [], "% is literal");
      assert.deepEqual(await found({ query: "filter-2024" }), ["FILTER-2024-0001", "FILTER-2024-0002"], "the id");
    });

    test("a later modified replaces the record and all its rows; an earlier or equal one is unchanged", async () => {
      await importOsvFeed(store.db, feedOf(osvRecord("TEST-2024-0002", { name: "old-name", aliases: ["CVE-2024-0002"] })));
      const newer = osvRecord("TEST-2024-0002", { name: "new-name", modified: "2024-01-01T00:00:00.5+00:00", aliases: ["CVE-2024-9999"] });
      const older = osvRecord("TEST-2024-0002", { name: "older-name", modified: "2023-12-31T23:59:59Z" });
      const same = osvRecord("TEST-2024-0002", { name: "same-time", modified: "2024-01-01T01:00:00.500+01:00" });
      assert.deepEqual(await importOsvFeed(store.db, feedOf(newer, older, same)), { read: 3, added: 0, updated: 1, unchanged: 2, rejected: 0 });
      assert.deepEqual((await advisories("TEST-2024-0002")).map((r) => r.artifact_name), ["new-name"]);
      assert.deepEqual(await names("TEST-2024-0002"), ["CVE-2024-9999", "TEST-2024-0002"]);
      const doc = await store.db.selectFrom("osv_records").selectAll().where("uid", "=", "TEST-2024-0002").executeTakeFirstOrThrow();
      assert.equal(doc.modified, "2024-01-01T00:00:00.5+00:00");
      assert.equal(JSON.parse(doc.document).affected[0].package.name, "new-name");
    });

    test("a record repeated in one feed is taken in order, across batch boundaries too", async () => {
      const v1 = osvRecord("TEST-2024-0003", { name: "v1" });
      const v2 = osvRecord("TEST-2024-0003", { name: "v2", modified: "2024-02-01T00:00:00Z" });
      const v3 = osvRecord("TEST-2024-0003", { name: "v3", modified: "2024-03-01T00:00:00Z" });
      for (const batchRecords of [1, 2, 500]) {
        await store.db.deleteFrom("advisories").where("advisory_id", "=", "TEST-2024-0003").execute();
        await store.db.deleteFrom("osv_names").where("record_uid", "=", "TEST-2024-0003").execute();
        await store.db.deleteFrom("osv_records").where("uid", "=", "TEST-2024-0003").execute();
        const counts = await importOsvFeed(store.db, feedOf(v1, v3, v2, v3), { batchRecords });
        assert.deepEqual(counts, { read: 4, added: 1, updated: 1, unchanged: 2, rejected: 0 }, `batches of ${batchRecords}`);
        assert.deepEqual((await advisories("TEST-2024-0003")).map((r) => r.artifact_name), ["v3"]);
      }
    });

    test("a withdrawn record keeps its rows, marked withdrawn", async () => {
      await importOsvFeed(store.db, feedOf(osvRecord("TEST-2024-0004")));
      const withdrawn = osvRecord("TEST-2024-0004", { modified: "2024-05-01T00:00:00Z", withdrawn: "2024-05-01T00:00:00Z" });
      await importOsvFeed(store.db, feedOf(withdrawn));
      const [row] = await advisories("TEST-2024-0004");
      assert.equal(Number(row.withdrawn_time), Date.parse("2024-05-01T00:00:00Z"));
      const doc = await store.db.selectFrom("osv_records").selectAll().where("uid", "=", "TEST-2024-0004").executeTakeFirstOrThrow();
      assert.equal(Number(doc.withdrawn_time), Date.parse("2024-05-01T00:00:00Z"));
    });

    test("a refused record is counted and skipped; --strict stops and writes nothing of the batch in progress", async () => {
      const seen: string[] = [];
      const lenient = await importOsvFeed(store.db, feedOf(osvRecord("TEST-2024-0005"), refused("bad.json"), osvRecord("TEST-2024-0006")), {
        onRejected: (e) => seen.push(e.message),
      });
      assert.deepEqual(lenient, { read: 3, added: 2, updated: 0, unchanged: 0, rejected: 1 });
      assert.deepEqual(seen, ["bad.json: affected[0].package.ecosystem: not an OSV ecosystem"]);

      const feed = feedOf(osvRecord("TEST-2024-0007"), osvRecord("TEST-2024-0008"), osvRecord("TEST-2024-0009"), refused("worse.json"), osvRecord("TEST-2024-0010"));
      await assert.rejects(importOsvFeed(store.db, feed, { strict: true, batchRecords: 2 }), (e) => {
        assert.ok(e instanceof StrictImportError);
        assert.equal(e.rejected.source, "worse.json");
        assert.deepEqual(e.counts, { read: 4, added: 2, updated: 0, unchanged: 0, rejected: 1 });
        return true;
      });
      const stored = await store.db.selectFrom("osv_records").select("uid").where("uid", "in", ["TEST-2024-0007", "TEST-2024-0008", "TEST-2024-0009", "TEST-2024-0010"]).execute();
      assert.deepEqual(stored.map((r) => r.uid).sort(), ["TEST-2024-0007", "TEST-2024-0008"], "the committed batch stands; the one in progress is not written");
    });

    test("a record nested 5,000 deep is refused alone; the records around it are imported", async () => {
      const dir = mkdtempSync(join(tmpdir(), "osv-deep-"));
      try {
        const record = (id: string) => JSON.stringify(osvRecord(id));
        writeFileSync(join(dir, "a.json"), record("DEEP-2024-0001"));
        writeFileSync(join(dir, "b.json"), `{"id":"DEEP-2024-0002","modified":"2024-01-01T00:00:00Z","database_specific":${"[".repeat(5000)}${"]".repeat(5000)}}`);
        writeFileSync(join(dir, "c.json"), record("DEEP-2024-0003"));
        const seen: string[] = [];
        const counts = await importOsvFeed(store.db, readOsvFeed([dir]), { onRejected: (e) => seen.push(e.message) });
        assert.deepEqual(counts, { read: 3, added: 2, updated: 0, unchanged: 0, rejected: 1 });
        assert.equal(seen.length, 1);
        assert.match(seen[0], /b\.json: nested more than 64 levels deep/);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    });

    // SQLite only: PostgreSQL has no such setting.
    if (database.name === "sqlite") {
      test("an import checkpoints the WAL every 10,000 pages, and the default 1,000 holds again after it, failed or not", async () => {
        const interval = async () => Number((await sql<{ wal_autocheckpoint: number }>`pragma wal_autocheckpoint`.execute(store.db)).rows[0].wal_autocheckpoint);
        const during: number[] = [];
        async function* watched(): AsyncGenerator<FeedEntry> {
          for await (const entry of feedOf(osvRecord("TEST-2024-0011"), osvRecord("TEST-2024-0012"))) {
            during.push(await interval());
            yield entry;
          }
        }
        assert.equal(await interval(), 1000);
        await importOsvFeed(store.db, watched(), { batchRecords: 1 });
        assert.deepEqual(during, [10000, 10000]);
        assert.equal(await interval(), 1000);
        await assert.rejects(importOsvFeed(store.db, feedOf(refused("bad.json")), { strict: true }), StrictImportError);
        assert.equal(await interval(), 1000);
      });
    }
  });
}
