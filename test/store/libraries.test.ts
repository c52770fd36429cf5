import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { bootstrapOrganization } from "../../src/server/bootstrap.js";
import type { Page } from "../../src/aip/pagination.js";
import { importLibraries } from "../../src/domains/libraries/library-import.js";
import { countArtifacts, listArtifacts, listArtifactVersions } from "../../src/domains/libraries/store/artifacts.js";
import { readLibraryFeed } from "../../src/engines/package-feeds/feed.js";
import { artifactUid } from "../../src/domains/libraries/artifact-rows.js";
import { openDatabase } from "../../src/store/dialect.js";
import type { Database } from "../../src/domains/kit/schema.js";
import { migrate, openStore, type Store } from "../../src/server/open-store.js";
import { dropFresh, testDatabases } from "../support/databases.js";
import { inRepo } from "../support/repo.js";

const NPM = inRepo("test/fixtures/libraries/npm");
const PYPI = inRepo("test/fixtures/libraries/pypi");
const MAVEN = inRepo("test/fixtures/libraries/maven");
const page = (order: Page["order"], limit = 50): Page => ({ limit, skip: 0, order });

for (const database of await testDatabases()) {
  describe(`library store on ${database.name}`, { skip: database.skip }, () => {
    let store: Store;
    let url: string;
    let org: string;

    before(async () => {
      url = await database.fresh();
      store = await openStore(url);
      org = (await bootstrapOrganization(store, "acme", Date.now())).organization.uid;
    });
    after(async () => {
      await store?.close();
      await dropFresh(url);
    });

    test("the npm fixtures import, a second import changes nothing, a changed document replaces its artifact", async () => {
      const first = await importLibraries(store.db, org, readLibraryFeed([NPM]), { batchItems: 7 });
      assert.deepEqual(first, { read: 34, added: 34, updated: 0, unchanged: 0, rejected: 0 });
      const again = await importLibraries(store.db, org, readLibraryFeed([NPM]));
      assert.deepEqual(again, { read: 34, added: 0, updated: 0, unchanged: 34, rejected: 0 });
      const changed = { name: "is-number", "dist-tags": { latest: "8.0.0" }, versions: { "8.0.0": { description: "new" } }, time: {} };
      const replaced = await importLibraries(store.db, org, (async function* () {
        const { parseLibraryDocument } = await import("../../src/engines/package-feeds/feed.js");
        yield { item: parseLibraryDocument(JSON.stringify(changed), "is-number.json") };
      })());
      assert.deepEqual(replaced, { read: 1, added: 0, updated: 1, unchanged: 0, rejected: 0 });
    });

    test("the PyPI and Maven fixtures import, a second import changes nothing, versions ranked by PEP 440 and Maven's order", async () => {
      const first = await importLibraries(store.db, org, readLibraryFeed([PYPI, MAVEN]), { batchItems: 5 });
      assert.deepEqual(first, { read: 30, added: 30, updated: 0, unchanged: 0, rejected: 0 });
      const again = await importLibraries(store.db, org, readLibraryFeed([MAVEN, PYPI]));
      assert.deepEqual(again, { read: 30, added: 0, updated: 0, unchanged: 30, rejected: 0 });
      assert.deepEqual([...(await countArtifacts(store.db, { ecosystems: ["PyPI", "Maven"], visible: [org] }))].sort(), [["Maven", 8], ["PyPI", 22]]);
      const byName = [{ column: "name", desc: false }, { column: "uid", desc: false }] as Page["order"];
      const [guava] = (await listArtifacts(store.db, { ecosystems: ["Maven"], query: "guava", visible: [org] }, page(byName))).rows;
      const oldest = await listArtifactVersions(store.db, guava.uid, {}, page([{ column: "rank", desc: false }, { column: "uid", desc: false }], 3));
      assert.deepEqual(oldest.rows.slice(0, 3).map((v) => v.version), ["16.0.1", "25.1-jre", "30.1-jre"]);
      const [websockets] = (await listArtifacts(store.db, { ecosystems: ["PyPI"], query: "websockets", visible: [org] }, page(byName))).rows;
      const newest = await listArtifactVersions(store.db, websockets.uid, {}, page([{ column: "rank", desc: true }, { column: "uid", desc: false }]));
      assert.deepEqual(newest.rows.map((v) => v.version), ["17.1", "16.1.1", "15.0.1"]);
    });

    test("query matches names ignoring case, % and _ literally; counts per ecosystem; versions in rank order", async () => {
      const found = await listArtifacts(store.db, { ecosystems: ["npm"], query: "IS-", visible: [org] }, page([{ column: "name", desc: false }, { column: "uid", desc: false }]));
      assert.deepEqual(found.rows.map((r) => r.name), ["is-even", "is-number", "is-odd", "path-is-absolute"]);
      assert.equal((await listArtifacts(store.db, { ecosystems: ["npm"], query: "_", visible: [org] }, page([{ column: "uid", desc: false }]))).total, 0);
      assert.equal((await listArtifacts(store.db, { ecosystems: ["npm"], visible: [] }, page([{ column: "uid", desc: false }]))).total, 0);
      assert.deepEqual([...(await countArtifacts(store.db, { ecosystems: ["npm", "PyPI"], visible: undefined }))].sort(), [["PyPI", 22], ["npm", 34]]);
      const ms = found.rows.length > 0 ? (await listArtifacts(store.db, { ecosystems: ["npm"], query: "ms", visible: [org] }, page([{ column: "name", desc: false }, { column: "uid", desc: false }]))).rows.find((r) => r.name === "ms")! : undefined;
      const versions = await listArtifactVersions(store.db, ms!.uid, {}, page([{ column: "rank", desc: true }, { column: "uid", desc: false }], 3));
      assert.deepEqual(versions.rows.map((v) => v.version), ["4.0.0-nightly.202508271359", "4.0.0-nightly.202508271358", "4.0.0-nightly.202508270145", "3.0.0-canary.202508261828"], "SemVer order: prereleases of 4.0.0 above 3.0.0 prereleases");
      assert.equal(versions.total, 32);
    });

    test("the name index: a query of 3+ characters is looked up by trigram, follows a renamed project, finds nothing for an absent trigram", async () => {
      const byUid = page([{ column: "uid", desc: false }]);
      const search = async (query: string, ecosystems = ["PyPI"]) => (await listArtifacts(store.db, { ecosystems, query, visible: [org] }, byUid)).rows.map((r) => r.name);
      const project = (name: string) => ({ ecosystem: "PyPI" as const, name, description: "", versions: [{ version: "1.0", sizeBytes: 0 }] });
      const feed = (name: string) => (async function* () { yield { item: project(name) }; })();
      await importLibraries(store.db, org, feed("zope.interface"));
      assert.deepEqual(await search("ope.int"), ["zope.interface"]);
      const renamed = await importLibraries(store.db, org, feed("zope-interface"));
      assert.deepEqual(renamed, { read: 1, added: 0, updated: 1, unchanged: 0, rejected: 0 }, "one project under PEP 503");
      assert.deepEqual(await search("ope.int"), [], "the old spelling's trigrams are gone");
      assert.deepEqual(await search("ope-int"), ["zope-interface"]);
      assert.deepEqual(await search("zzzqqq"), []);
      assert.deepEqual(await search("nimis", ["npm"]), ["minimist"]);
      assert.deepEqual(await search("s-ev", ["npm"]), ["is-even"], "the whole text is checked, not only its trigrams");
      const jackson = "com.fasterxml.jackson.core:jackson-annotations";
      assert.deepEqual(await search(jackson.toUpperCase(), ["Maven"]), [jackson], "a long query: some of its 44 trigrams weighed");
      assert.deepEqual(await search(`${jackson}x`, ["Maven"]), [], "a trigram not weighed still has to be in the name");
      const trigrams = await store.db.selectFrom("artifact_trigrams").select("trigram").where("artifact_uid", "=", artifactUid(org, "PyPI", "zope-interface")).orderBy("trigram").execute();
      assert.deepEqual(trigrams.map((t) => t.trigram), ["-in", "ace", "e-i", "erf", "fac", "int", "nte", "ope", "pe-", "rfa", "ter", "zop"]);
    });

    test("the name index migration indexes the artifacts an older install stored", async () => {
      const older = await database.fresh();
      const opened = openDatabase<Database>(older);
      try {
        await migrate(opened.db, "2026-11-25-0013-artifacts");
        const owner = (await bootstrapOrganization({ ...opened, close: async () => {} }, "older", 1)).organization.uid;
        const uid = artifactUid(owner, "npm", "left-pad");
        await opened.db.insertInto("artifacts").values({ uid, group_uid: owner, ecosystem: "npm", name: "left-pad", name_lower: "left-pad", description: "", latest_version: "1.3.0", version_count: 0, digest: "", create_time: 1, update_time: 1 }).execute();
        await migrate(opened.db);
        const found = await listArtifacts(opened.db, { ecosystems: ["npm"], query: "FT-P", visible: [owner] }, page([{ column: "uid", desc: false }]));
        assert.deepEqual(found.rows.map((r) => r.uid), [uid]);
      } finally {
        await opened.db.destroy();
        await dropFresh(older);
      }
    });
  });
}
