import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { StoreError } from "../../src/store/errors.js";
import { apiErrorOf } from "../../src/aip/store-errors.js";
import { OWNERSHIP } from "../../src/server/domains.js";
import { ApiError } from "../../src/aip/errors.js";
import { createPager } from "../../src/aip/pagination.js";
import { newChildUid, newRootUid } from "../../src/aip/uidp.js";
import { insertGroup } from "../../src/domains/iam/store/groups.js";
import { deleteRepo, findRepoByPath, getRepo, insertRepo, listRepos, repoOrderable, updateReadme, updateRepo } from "../../src/domains/registry/store/repos.js";
import {
  deleteStaleBlob,
  deleteStaleUploads,
  findUpload,
  insertUpload,
  linkBlob,
  linkedBlobSize,
  recordBlob,
  staleBlobs,
  touchBlobs,
  unlinkedBlobs,
} from "../../src/domains/registry/store/blobs.js";
import {
  deleteManifest,
  existingManifests,
  findManifest,
  listReferrers,
  manifestPage,
  putManifest,
  putManifestRefs,
  reachableFromTags,
} from "../../src/domains/registry/store/manifests.js";
import { readTagHistory } from "../../src/domains/registry/store/tag-history.js";
import { deleteTag, deleteTagByName, findTagByName, listTagNames, listTags, tagOrderable, upsertTag } from "../../src/domains/registry/store/tags.js";
import { openStore, type Store } from "../../src/server/open-store.js";
import { inTransaction } from "../../src/store/transaction.js";
import { dropFresh, testDatabases } from "../support/databases.js";

const kind = (e: unknown) => (e instanceof StoreError ? apiErrorOf(e).kind : e instanceof ApiError ? e.kind : String(e));
const digest = (n: number) => `sha256:${n.toString(16).padStart(64, "0")}`;

for (const database of await testDatabases()) {
  describe(`registry store on ${database.name}`, { skip: database.skip }, () => {
    let store: Store;
    let url: string;
    const pager = createPager({ secret: Buffer.from("k") });
    let org: string;
    let folder: string;

    before(async () => {
      url = await database.fresh();
      store = await openStore(url);
      org = newRootUid();
      folder = newChildUid(org);
      await insertGroup(store.db, { uid: org, parent_uid: "", name: "reg-org", description: "", create_time: 1, update_time: 1 });
      await insertGroup(store.db, { uid: folder, parent_uid: org, name: "f", description: "", create_time: 1, update_time: 1 });
    });
    after(async () => {
      await store?.close();
      await dropFresh(url);
    });

    const repoRow = (group: string, name: string, time = 1) => ({ uid: newChildUid(group), group_uid: group, name, description: "", readme: "", create_time: time, update_time: time });

    test("repos: names unique per organization, org_uid from the root, path lookup", async () => {
      const a = await insertRepo(store.db, repoRow(folder, "app"));
      assert.equal(a.org_uid, org);
      await assert.rejects(insertRepo(store.db, repoRow(org, "app")), (e) => kind(e) === "ALREADY_EXISTS");
      await assert.rejects(insertRepo(store.db, repoRow(newChildUid(org), "x")), (e) => kind(e) === "NOT_FOUND");
      const b = await insertRepo(store.db, repoRow(org, "lib/b"));
      await assert.rejects(updateRepo(store.db, b.uid, { name: "app", description: "", update_time: 2 }), (e) => kind(e) === "ALREADY_EXISTS");
      assert.equal((await findRepoByPath(store.db, "reg-org", "app"))?.uid, a.uid);
      assert.equal(await findRepoByPath(store.db, "reg-org", "nope"), undefined);
      assert.equal(await findRepoByPath(store.db, "f", "app"), undefined, "only organizations name registry paths");
      assert.equal((await updateReadme(store.db, a.uid, "# r", 3)).readme, "# r");
      assert.equal((await getRepo(store.db, a.uid)).readme, "# r");
    });

    test("repos: list by name and order, with total", async () => {
      const page = pager.parse({ pageSize: 2, pageToken: "", orderBy: "name desc", skip: 0 }, repoOrderable, "f");
      const { rows, total } = await listRepos(store.db, { uidp: { descendantsOf: org }, visible: undefined }, page);
      assert.equal(total, 2);
      assert.deepEqual(rows.map((r) => r.name), ["lib/b", "app"]);
      const named = await listRepos(store.db, { name: "app", uidp: {}, visible: [folder] }, page);
      assert.equal(named.total, 1);
    });

    test("tags: upsert moves, history in the same transaction, bounds inclusive, delete keeps history", async () => {
      const repo = await insertRepo(store.db, repoRow(folder, "tagged"));
      const t1 = await inTransaction(store.db, undefined, (trx) => upsertTag(trx, repo.uid, { name: "latest", digest: digest(1), deprecated: false }, 100));
      const t2 = await inTransaction(store.db, undefined, (trx) => upsertTag(trx, repo.uid, { name: "latest", digest: digest(2), deprecated: false }, 200));
      assert.equal(t2.uid, t1.uid);
      assert.equal(Number(t2.create_time), 100);
      await inTransaction(store.db, undefined, (trx) => upsertTag(trx, repo.uid, { name: "latest", digest: digest(2), deprecated: true }, 250));
      await inTransaction(store.db, undefined, (trx) => upsertTag(trx, repo.uid, { name: "latest", digest: digest(3), deprecated: true }, 300));
      const all = await readTagHistory(store.db, repo.uid, "latest", { limit: 1000 });
      assert.deepEqual(all.map((h) => [h.seq, h.digest, h.update_time]), [[1, digest(1), 100], [2, digest(2), 200], [3, digest(3), 300]]);
      assert.deepEqual((await readTagHistory(store.db, repo.uid, "latest", { start: 200, end: 300, limit: 1000 })).map((h) => h.seq), [2, 3]);
      assert.deepEqual((await readTagHistory(store.db, repo.uid, "latest", { start: 100, end: 200, limit: 1000 })).map((h) => h.seq), [1, 2]);
      assert.deepEqual((await readTagHistory(store.db, repo.uid, "latest", { limit: 1 })).map((h) => h.seq), [1]);

      // A failed transaction writes neither the tag nor its history.
      await assert.rejects(
        inTransaction(store.db, undefined, async (trx) => {
          await upsertTag(trx, repo.uid, { name: "latest", digest: digest(9), deprecated: false }, 400);
          throw new Error("boom");
        }),
      );
      assert.equal((await readTagHistory(store.db, repo.uid, "latest", { limit: 1000 })).length, 3);

      await assert.rejects(deleteRepo(store.db, repo.uid, OWNERSHIP.deletedWithRepo), (e) => kind(e) === "FAILED_PRECONDITION");
      await deleteTag(store.db, t1.uid);
      await assert.rejects(deleteTag(store.db, t1.uid), (e) => kind(e) === "NOT_FOUND");
      assert.equal((await readTagHistory(store.db, repo.uid, "latest", { limit: 1000 })).length, 3, "deleting a tag keeps its history");
      // Re-created on the last digest: no record; on another: seq continues, and time never goes back.
      const again = await inTransaction(store.db, undefined, (trx) => upsertTag(trx, repo.uid, { name: "latest", digest: digest(3), deprecated: false }, 50));
      assert.notEqual(again.uid, t1.uid);
      assert.equal((await readTagHistory(store.db, repo.uid, "latest", { limit: 1000 })).length, 3);
      await inTransaction(store.db, undefined, (trx) => upsertTag(trx, repo.uid, { name: "latest", digest: digest(4), deprecated: false }, 60));
      const last = (await readTagHistory(store.db, repo.uid, "latest", { limit: 1000 })).at(-1)!;
      assert.deepEqual([last.seq, last.digest], [4, digest(4)]);
      assert.ok(last.update_time >= 300);

      // Without a deprecated value the tag keeps its flag (false for a new tag).
      await inTransaction(store.db, undefined, (trx) => upsertTag(trx, repo.uid, { name: "kept", digest: digest(4), deprecated: true }, 61));
      assert.equal(Number((await inTransaction(store.db, undefined, (trx) => upsertTag(trx, repo.uid, { name: "kept", digest: digest(5) }, 62))).deprecated), 1);
      assert.equal(Number((await inTransaction(store.db, undefined, (trx) => upsertTag(trx, repo.uid, { name: "fresh", digest: digest(5) }, 62))).deprecated), 0);
      await deleteTagByName(store.db, repo.uid, "kept");
      await deleteTagByName(store.db, repo.uid, "fresh");

      const page = pager.parse({ pageSize: 10, pageToken: "", orderBy: "", skip: 0 }, tagOrderable, "f");
      const listed = await listTags(store.db, { uidp: { childrenOf: repo.uid }, digest: digest(4), updatedSince: 300, visible: undefined }, page);
      assert.equal(listed.total, 1);
      await assert.rejects(
        inTransaction(store.db, undefined, (trx) => upsertTag(trx, newChildUid(folder), { name: "x", digest: digest(1), deprecated: false }, 1)),
        (e) => kind(e) === "NOT_FOUND",
      );
    });

    test("tags: a push records its time whether it moves the tag or not; other writes leave it; it never goes back", async () => {
      const repo = await insertRepo(store.db, repoRow(folder, "push-times"));
      const set = (d: number, now: number, pushed?: boolean) => inTransaction(store.db, undefined, (trx) => upsertTag(trx, repo.uid, { name: "app", digest: digest(d) }, now, { pushed }));
      const times = (row: { update_time: number; push_time: number }) => [Number(row.update_time), Number(row.push_time)];
      assert.deepEqual(times(await set(1, 100)), [100, 0], "created by CreateTag: never pushed");
      assert.deepEqual(times(await set(1, 500, true)), [100, 500], "pushed where it points: pushed, unchanged");
      assert.deepEqual(times(await set(1, 300, true)), [100, 500], "a push with an earlier clock does not take it back");
      assert.deepEqual(times(await set(2, 600, true)), [600, 600], "pushed elsewhere: moved and pushed");
      assert.deepEqual(times(await set(3, 700)), [700, 600], "moved by CreateTag: not a push");
      assert.deepEqual((await readTagHistory(store.db, repo.uid, "app", { limit: 1000 })).map((h) => h.digest), [digest(1), digest(2), digest(3)], "a push that moves nothing adds no history");
      await deleteTagByName(store.db, repo.uid, "app");
    });

    test("manifests: bytes read back exactly, a digest is stored once per repo, deleting the repo removes them", async () => {
      const repo = await insertRepo(store.db, repoRow(folder, "images"));
      const content = Buffer.from([0, 255, 10, 13, 0x7b, 0x7d, 128]);
      const row = {
        repo_uid: repo.uid,
        digest: digest(7),
        media_type: "application/vnd.oci.image.manifest.v1+json",
        content,
        size: content.length,
        kind: "image" as const,
        image_size: 2 ** 40,
        architecture: "arm64",
        os: "linux",
        artifact_type: "",
        subject_digest: "",
        create_time: 5,
      };
      assert.equal(await putManifest(store.db, row), true);
      assert.equal(await putManifest(store.db, { ...row, architecture: "other" }), false);
      const read = await findManifest(store.db, repo.uid, digest(7));
      assert.deepEqual(read?.content, content);
      assert.equal(read?.image_size, 2 ** 40);
      assert.equal(read?.architecture, "arm64");
      assert.equal(await findManifest(store.db, repo.uid, digest(8)), undefined);
      assert.deepEqual([...(await existingManifests(store.db, repo.uid, [digest(7), digest(8)]))], [digest(7)]);
      await deleteRepo(store.db, repo.uid, OWNERSHIP.deletedWithRepo);
      assert.equal(await findManifest(store.db, repo.uid, digest(7)), undefined);
    });

    test("blob use times: a push marking a blob used and a collection deleting it never both win", async () => {
      const repo = await insertRepo(store.db, repoRow(folder, "gc"));
      const [a, b, c] = [digest(50), digest(51), digest(52)];
      for (const d of [a, b, c]) {
        await recordBlob(store.db, d, 10, 100);
        await linkBlob(store.db, repo.uid, d);
      }
      assert.equal(await touchBlobs(store.db, [c, c, digest(59)], 300), 1, "only recorded blobs, each once");
      await recordBlob(store.db, b, 10, 250); // recording a known blob again marks it used
      assert.deepEqual((await staleBlobs(store.db, 200, 10)).map((r) => r.digest), [a]);
      assert.deepEqual(await staleBlobs(store.db, 400, 1, a), [{ digest: b, size: 10 }]);
      assert.equal(await inTransaction(store.db, undefined, (trx) => deleteStaleBlob(trx, b, 200)), false, "used since");

      // A push marks `a` used inside its transaction; a collection started meanwhile waits, then spares it.
      const gate = (): [Promise<void>, () => void] => {
        let open!: () => void;
        return [new Promise<void>((resolve) => (open = resolve)), () => open()];
      };
      const [pushHolds, pushed] = gate();
      const [released, release] = gate();
      const push = inTransaction(store.db, undefined, async (trx) => {
        const n = await touchBlobs(trx, [a], 300);
        pushed();
        await released;
        return n;
      });
      await pushHolds;
      const collection = inTransaction(store.db, undefined, (trx) => deleteStaleBlob(trx, a, 200));
      await new Promise((resolve) => setTimeout(resolve, 50));
      release();
      assert.equal(await push, 1);
      assert.equal(await collection, false);
      assert.equal(await linkedBlobSize(store.db, repo.uid, a), 10);

      // The other way round: the collection holds the blob; the push waits, then finds it gone.
      await store.db.updateTable("blobs").set({ use_time: 100 }).where("digest", "=", a).execute();
      const [gcHolds, claimed] = gate();
      const [gcReleased, releaseGc] = gate();
      const collecting = inTransaction(store.db, undefined, async (trx) => {
        const deleted = await deleteStaleBlob(trx, a, 200);
        claimed();
        await gcReleased;
        return deleted;
      });
      await gcHolds;
      const late = touchBlobs(store.db, [a], 400);
      await new Promise((resolve) => setTimeout(resolve, 50));
      releaseGc();
      assert.equal(await collecting, true);
      assert.equal(await late, 0);
      assert.equal(await linkedBlobSize(store.db, repo.uid, a), undefined);
      assert.deepEqual(await unlinkedBlobs(store.db, repo.uid, [a, b]), [a]);
    });

    test("blobs, uploads, index references, referrers, tag names, and what a tag-limited token reaches", async () => {
      const repo = await insertRepo(store.db, repoRow(folder, "pushed"));
      const other = await insertRepo(store.db, repoRow(folder, "other"));
      await recordBlob(store.db, digest(20), 2 ** 33, 1);
      await recordBlob(store.db, digest(20), 5, 2);
      await linkBlob(store.db, repo.uid, digest(20));
      await linkBlob(store.db, repo.uid, digest(20));
      assert.equal(await linkedBlobSize(store.db, repo.uid, digest(20)), 2 ** 33, "recorded once");
      assert.equal(await linkedBlobSize(store.db, other.uid, digest(20)), undefined, "a blob is served only by repos that link it");
      assert.deepEqual(await unlinkedBlobs(store.db, repo.uid, [digest(20), digest(21), digest(21)]), [digest(21)]);

      await insertUpload(store.db, { id: "u1", repo_uid: repo.uid, create_time: 10 });
      await insertUpload(store.db, { id: "u2", repo_uid: repo.uid, create_time: 30 });
      assert.equal((await findUpload(store.db, repo.uid, "u1"))?.id, "u1");
      assert.equal(await findUpload(store.db, other.uid, "u1"), undefined, "an upload belongs to its repo");
      assert.deepEqual(await deleteStaleUploads(store.db, 20), ["u1"]);

      const manifest = (n: number, extra: { kind?: "image" | "index"; subject?: string; type?: string } = {}) => ({
        repo_uid: repo.uid,
        digest: digest(n),
        media_type: "application/vnd.oci.image.manifest.v1+json",
        content: Buffer.from(`{"n":${n}}`),
        size: 8,
        kind: extra.kind ?? ("image" as const),
        image_size: 0,
        architecture: "",
        os: "",
        artifact_type: extra.type ?? "",
        subject_digest: extra.subject ?? "",
        create_time: 1,
      });
      await putManifest(store.db, manifest(30, { kind: "index" }));
      await putManifest(store.db, manifest(31));
      await putManifest(store.db, manifest(32));
      await putManifestRefs(store.db, repo.uid, digest(30), [digest(31), digest(32), digest(31)]);
      await putManifest(store.db, manifest(40, { subject: digest(31), type: "application/x.sbom" }));
      await putManifest(store.db, manifest(41, { subject: digest(31), type: "application/x.sig" }));
      assert.deepEqual((await listReferrers(store.db, repo.uid, digest(31))).map((r) => r.digest), [digest(40), digest(41)]);
      assert.deepEqual((await listReferrers(store.db, repo.uid, digest(31), "application/x.sig")).map((r) => r.digest), [digest(41)]);

      await inTransaction(store.db, undefined, (trx) => upsertTag(trx, repo.uid, { name: "latest", digest: digest(30), deprecated: false }, 100));
      await inTransaction(store.db, undefined, (trx) => upsertTag(trx, repo.uid, { name: "v2", digest: digest(41), deprecated: false }, 100));
      assert.equal(await reachableFromTags(store.db, repo.uid, digest(30), ["latest"]), true);
      assert.equal(await reachableFromTags(store.db, repo.uid, digest(32), ["latest", "latest-dev"]), true, "an image of the index");
      assert.equal(await reachableFromTags(store.db, repo.uid, digest(41), ["latest"]), false);
      assert.equal(await reachableFromTags(store.db, repo.uid, digest(32), []), false);

      assert.deepEqual(await listTagNames(store.db, repo.uid, { limit: 10 }), ["latest", "v2"]);
      const page = await manifestPage(store.db, 2, { repo_uid: repo.uid, digest: digest(31) });
      assert.deepEqual(page.map((m) => m.digest), [digest(32), digest(40)]);
      assert.deepEqual(page[0].content, Buffer.from(`{"n":32}`));
      assert.deepEqual(await listTagNames(store.db, repo.uid, { limit: 10, last: "latest" }), ["v2"]);
      assert.deepEqual(await listTagNames(store.db, repo.uid, { limit: 1 }), ["latest"]);
      assert.deepEqual(await listTagNames(store.db, repo.uid, { limit: 10, only: ["v2", "nope"] }), ["v2"]);
      assert.deepEqual(await listTagNames(store.db, repo.uid, { limit: 10, only: [] }), []);

      // Deleting a manifest deletes the tags pointing to it; their history stays.
      assert.equal(await deleteManifest(store.db, repo.uid, digest(30)), true);
      assert.equal(await deleteManifest(store.db, repo.uid, digest(30)), false);
      assert.equal(await findTagByName(store.db, repo.uid, "latest"), undefined);
      assert.equal((await readTagHistory(store.db, repo.uid, "latest", { limit: 10 })).length, 1);
      assert.equal(await reachableFromTags(store.db, repo.uid, digest(32), ["latest"]), false, "the index's references went with it");
      assert.equal(await deleteTagByName(store.db, repo.uid, "v2"), true);
      assert.equal(await deleteTagByName(store.db, repo.uid, "v2"), false);
      await deleteRepo(store.db, repo.uid, OWNERSHIP.deletedWithRepo);
      assert.equal(await findUpload(store.db, repo.uid, "u2"), undefined);
    });
  });
}
