import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { MEDIA_TYPE } from "../../src/domains/registry/manifest.js";
import { findRepoByPath } from "../../src/domains/registry/store/repos.js";
import { dropFresh, testDatabases } from "../support/databases.js";
import { buildImage } from "../support/oci-layout.js";
import { registryClient, type RegistryClient } from "../support/registry-push.js";
import { startTestServer, type TestServer } from "../support/test-server.js";

/**
 * What retention counts as a tag's activity: a push of the tag, moved or not, and a change of the
 * tag; not a pull. Four tags of one image, set two days ago (CreateTag), under a policy that expires
 * tags after a day: the one re-pushed to the same image just before the server's pass stays, as
 * does the one a push moved; the one pulled and the one left alone go. On SQLite and on PostgreSQL.
 */

const DAY = 86_400_000;

for (const database of await testDatabases()) {
  describe(`retention activity on ${database.name}`, { skip: database.skip }, () => {
    let server: TestServer;
    let dbUrl: string;
    let repoUid: string;
    let client: RegistryClient;
    const image = buildImage({ architecture: "amd64", label: "one" });
    const other = buildImage({ architecture: "amd64", label: "two" });

    const api = async (method: string, path: string, body: unknown) => {
      const res = await fetch(`${server.apiUrl}${path}`, {
        method,
        headers: { authorization: `Bearer ${server.ownerToken}`, "content-type": "application/json" },
        body: JSON.stringify(body),
      });
      assert.equal(res.status, 200, await res.text());
    };
    const manifest = (method: string, reference: string, body?: Buffer) =>
      client.request(method, `/v2/acme/app/manifests/${reference}`, { body, headers: { accept: MEDIA_TYPE.ociManifest, ...(body ? { "content-type": MEDIA_TYPE.ociManifest } : {}) } });

    before(async () => {
      dbUrl = await database.fresh();
      server = await startTestServer({ dbUrl, logLevel: "silent" });
      const token = (await server.server.tokens.issue({ subject: server.ownerUid, audience: "http://registry.test" })).token;
      client = registryClient([server.registryUrl], token);
      for (const built of [image, other]) {
        for (const blob of [built.config, ...built.layers]) await client.pushBlob("acme/app", blob.bytes);
        assert.equal((await manifest("PUT", built.manifest.digest, built.manifest.bytes)).status, 201);
      }
      repoUid = (await findRepoByPath(server.store.db, "acme", "app"))!.uid;
      for (const name of ["repushed", "moved", "pulled", "idle"]) await api("POST", `/registry/v2/tags/${repoUid}`, { name, digest: image.manifest.digest });
      await server.store.db.updateTable("tags").set({ update_time: Date.now() - 2 * DAY }).where("repo_uid", "=", repoUid).execute();
      await api("POST", `/registry/v2/retentionPolicies/${server.org.uid}`, { expireAfter: `${DAY / 1000}s` });
    });
    after(async () => {
      await server?.close();
      if (database.name === "postgres") await dropFresh(dbUrl);
    });

    test("a tag re-pushed to the same image just before a pass stays; pulls do not count", async () => {
      assert.equal((await manifest("PUT", "repushed", image.manifest.bytes)).status, 201);
      assert.equal((await manifest("PUT", "moved", other.manifest.bytes)).status, 201);
      assert.equal((await manifest("GET", "pulled")).status, 200);
      assert.equal((await manifest("HEAD", "pulled")).status, 200);
      await server.server.workers.get("retention")!.drain!();
      const tags = async () => (JSON.parse((await client.request("GET", "/v2/acme/app/tags/list")).bytes.toString()) as { tags: string[] | null }).tags ?? [];
      assert.deepEqual((await tags()).sort(), ["moved", "repushed"]);
      assert.equal((await manifest("GET", "repushed")).headers.get("docker-content-digest"), image.manifest.digest);

      // Once the push is older than the rule, the tag goes.
      await server.store.db.updateTable("tags").set({ push_time: Date.now() - 2 * DAY }).where("repo_uid", "=", repoUid).where("name", "=", "repushed").execute();
      await server.server.workers.get("retention")!.drain!();
      assert.deepEqual(await tags(), ["moved"]);
    });
  });
}
