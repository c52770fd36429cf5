import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { openStore } from "../../src/server/open-store.js";
import { runRetentionPass } from "../../src/domains/registry/retention-pass.js";
import { leasedRetentionPass } from "../../src/domains/registry/retention-worker.js";
import { RetentionLeaseLost, takeRetentionLease } from "../../src/domains/registry/store/retention-lease.js";
import { findRepoByPath } from "../../src/domains/registry/store/repos.js";
import { runCli } from "../support/child-server.js";
import { dropFresh, testDatabases } from "../support/databases.js";
import { blobOf, buildImage } from "../support/oci-layout.js";
import { registryClient, type RegistryClient } from "../support/registry-push.js";
import { startTestServer, type TestServer } from "../support/test-server.js";

/**
 * Retention policies, through the real interfaces: CRUD over REST, a repo of a few hundred tags
 * pushed through the registry host, `platform-api registry retention --dry-run` for a table of
 * policies, then a real pass by the server's worker (events, then `registry gc` freeing the blobs),
 * and two processes racing for the pass; on SQLite and on PostgreSQL.
 */

const DAY = 86_400_000;
const BUILDS = 300;
const dir = mkdtempSync(join(tmpdir(), "platform-api-retention-"));
after(() => rmSync(dir, { recursive: true, force: true }));
const build = (i: number) => `build-${String(i).padStart(3, "0")}`;
const builds = (from: number, to: number) => Array.from({ length: to - from }, (_, i) => build(from + i));

interface Answer {
  status: number;
  body: Record<string, unknown>;
}

for (const database of await testDatabases()) {
  describe(`retention on ${database.name}`, { skip: database.skip }, () => {
    let server: TestServer;
    let dbUrl: string;
    let client: RegistryClient;
    let repoUid: string;
    const manifestOf = new Map<string, string>();

    const api = async (method: string, path: string, body?: unknown): Promise<Answer> => {
      const res = await fetch(`http://127.0.0.1:${server.apiPort}${path}`, {
        method,
        headers: { authorization: `Bearer ${server.ownerToken}`, "content-type": "application/json" },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      const text = await res.text();
      return { status: res.status, body: text === "" ? {} : (JSON.parse(text) as Record<string, unknown>) };
    };
    const setPolicy = async (policyUid: string, rules: Record<string, unknown>) => {
      const res = await api("PATCH", `/registry/v2/retentionPolicies/${policyUid}?updateMask=keep_last,keep_tags,expire_after,untagged_grace`, rules);
      assert.equal(res.status, 200, JSON.stringify(res.body));
    };
    const dryRun = async () => JSON.parse(await runCli("registry", "retention", "--dry-run", "--repo", "acme/app", "--db", dbUrl)) as { dryRun: boolean; repos: Array<{ deletedTags: string[]; deletedManifests: string[]; keptTags: number }> };
    const tagNames = async () => {
      const res = await client.request("GET", "/v2/acme/app/tags/list?n=1000");
      return (JSON.parse(res.bytes.toString()) as { tags: string[] }).tags.sort();
    };

    before(async () => {
      dbUrl = database.name === "sqlite" ? join(dir, "retention.db") : await database.fresh();
      server = await startTestServer({ dbUrl });
      const token = (await server.server.tokens.issue({ subject: server.ownerUid, audience: "http://registry.test" })).token;
      client = registryClient([server.registryUrl], token);
      // Each build its own image (its own config blob), sharing one layer: BUILDS tags `build-000` (newest) to `build-299`.
      const base = buildImage({ architecture: "amd64" });
      await client.pushBlob("acme/app", base.layers[0].bytes);
      const push = async (tag: string, n: number) => {
        const config = blobOf(Buffer.from(JSON.stringify({ architecture: "amd64", os: "linux", config: { Labels: { n: String(n) } }, rootfs: { type: "layers", diff_ids: [] } })), "application/vnd.oci.image.config.v1+json");
        await client.pushBlob("acme/app", config.bytes);
        const manifest = Buffer.from(
          JSON.stringify({
            schemaVersion: 2,
            mediaType: "application/vnd.oci.image.manifest.v1+json",
            config: { mediaType: config.mediaType, digest: config.digest, size: config.size },
            layers: base.layers.map((l) => ({ mediaType: l.mediaType, digest: l.digest, size: l.size })),
          }),
        );
        const put = await client.request("PUT", `/v2/acme/app/manifests/${tag}`, { body: manifest, headers: { "content-type": "application/vnd.oci.image.manifest.v1+json" } });
        assert.equal(put.status, 201, put.bytes.toString());
        manifestOf.set(tag, put.headers.get("docker-content-digest")!);
      };
      for (let i = 0; i < BUILDS; i++) await push(build(i), i);
      for (const [n, tag] of ["latest", "v1.0", "v1.1", "release-1"].entries()) await push(tag, BUILDS + n);
      repoUid = (await findRepoByPath(server.store.db, "acme", "app"))!.uid;
      const repo = await api("PATCH", `/registry/v2/repos/${repoUid}?updateMask=immutable_tags`, { immutableTags: ["release-*"] });
      assert.equal(repo.status, 200, JSON.stringify(repo.body));
      // The pushes' ages: build-i was pushed i+1 days ago, latest half a day ago, v1.x 400 days ago, release-1 500.
      const now = Date.now();
      const ages = new Map<string, number>([...builds(0, BUILDS).map((t, i) => [t, (i + 1) * DAY] as const), ["latest", DAY / 2], ["v1.0", 400 * DAY], ["v1.1", 400 * DAY], ["release-1", 500 * DAY]]);
      for (const [tag, age] of ages) {
        await server.store.db.updateTable("tags").set({ update_time: now - age, push_time: now - age }).where("repo_uid", "=", repoUid).where("name", "=", tag).execute();
        await server.store.db.updateTable("manifests").set({ create_time: now - age }).where("repo_uid", "=", repoUid).where("digest", "=", manifestOf.get(tag)!).execute();
      }
    });
    after(async () => {
      await server?.close();
      if (database.name === "postgres") await dropFresh(dbUrl);
    });

    let policyUid = "";
    test("a policy is created, read, listed, changed and refused when out of bounds, over REST", async () => {
      const made = await api("POST", `/registry/v2/retentionPolicies/${server.org.uid}`, { keepLast: 10, keepTags: ["latest", "v*"] });
      assert.equal(made.status, 200, JSON.stringify(made.body));
      policyUid = made.body.uid as string;
      assert.equal(made.body.repoUid ?? "", "");
      assert.equal((await api("GET", `/registry/v2/retentionPolicies/${policyUid}`)).body.keepLast, 10);
      const listed = await api("GET", "/registry/v2/retentionPolicies");
      assert.deepEqual((listed.body.retentionPolicies as Array<{ uid: string }>).map((p) => p.uid), [policyUid]);
      const again = await api("POST", `/registry/v2/retentionPolicies/${server.org.uid}`, { keepLast: 3 });
      assert.equal(again.status, 409, "one group-wide policy per group");
      const bad = await api("POST", `/registry/v2/retentionPolicies/${server.org.uid}`, { repoUid, keepLast: -1, keepTags: ["no spaces"], expireAfter: "10s" });
      assert.equal(bad.status, 400);
      const fields = ((bad.body.details as Array<{ fieldViolations?: Array<{ field: string }> }>).find((d) => d.fieldViolations)?.fieldViolations ?? []).map((v) => v.field);
      assert.deepEqual(fields.sort(), ["retention_policy.expire_after", "retention_policy.keep_last", "retention_policy.keep_tags[0]"]);
      // A policy may name only a repo at or below its own group.
      const team = await api("POST", `/iam/v2/groups/${server.org.uid}`, { name: "team" });
      assert.equal(team.status, 200, JSON.stringify(team.body));
      const above = await api("POST", `/registry/v2/retentionPolicies/${team.body.uid as string}`, { repoUid, keepLast: 1 });
      assert.equal(above.status, 400);
      const aboveFields = ((above.body.details as Array<{ fieldViolations?: Array<{ field: string }> }>).find((d) => d.fieldViolations)?.fieldViolations ?? []).map((v) => v.field);
      assert.deepEqual(aboveFields, ["retention_policy.repo_uid"]);
      assert.deepEqual((await api("GET", `/registry/v2/retentionPolicies?repoUid=${repoUid}`)).body.retentionPolicies, [], "nothing was stored");
      const changed = await api("PATCH", `/registry/v2/retentionPolicies/${policyUid}?updateMask=expire_after`, { expireAfter: "3600s" });
      assert.equal(changed.status, 200);
      assert.equal(changed.body.expireAfter, "3600s");
      assert.equal(changed.body.keepLast, 10, "a masked update leaves the other rules");
      // A repo's own policy wins over the group's; deleting it brings the group's back.
      const own = await api("POST", `/registry/v2/retentionPolicies/${server.org.uid}`, { repoUid });
      assert.equal(own.status, 200, JSON.stringify(own.body));
      assert.deepEqual((await dryRun()).repos, [], "a policy without rules exempts its repo");
      assert.equal((await api("DELETE", `/registry/v2/retentionPolicies/${own.body.uid as string}`)).status, 200);
    });

    // Each row: the group-wide policy's rules, and the tags a dry run lists (the immutable release-1 always stays).
    const cases: Array<{ name: string; rules: Record<string, unknown>; deleted: string[] }> = [
      { name: "keep the last 10 and latest, v*", rules: { keepLast: 10, keepTags: ["latest", "v*"] }, deleted: builds(10, BUILDS) },
      { name: "keep the last 10 (latest among them)", rules: { keepLast: 10, keepTags: [] }, deleted: [...builds(9, BUILDS), "v1.0", "v1.1"] },
      { name: "expire after 30 days", rules: { keepLast: 0, keepTags: ["v*"], expireAfter: `${30 * 86400 + 3600}s` }, deleted: builds(30, BUILDS) },
      { name: "the last 50, and everything of the last 100 days", rules: { keepLast: 50, keepTags: [], expireAfter: `${100 * 86400 + 3600}s` }, deleted: [...builds(100, BUILDS), "v1.0", "v1.1"] },
      { name: "a count above the tags keeps them all", rules: { keepLast: 1000, keepTags: [] }, deleted: [] },
    ];
    for (const c of cases) {
      test(`dry run: ${c.name}`, async () => {
        await setPolicy(policyUid, c.rules);
        const out = await dryRun();
        assert.equal(out.dryRun, true);
        const deleted = out.repos[0]?.deletedTags ?? [];
        assert.deepEqual(deleted, [...c.deleted].sort());
        if (c.deleted.length > 0) assert.equal(out.repos[0].keptTags, BUILDS + 4 - c.deleted.length);
        assert.equal((await tagNames()).length, BUILDS + 4, "a dry run removes nothing");
      });
    }

    test("the server's pass removes what the policy says, with events; registry gc then frees the blobs", async () => {
      await setPolicy(policyUid, { keepLast: 20, keepTags: ["latest", "v*"], untaggedGrace: "86400s" });
      const gone = builds(20, BUILDS);
      await server.server.workers.get("retention")!.drain!();
      assert.deepEqual(await tagNames(), [...builds(0, 20), "latest", "release-1", "v1.0", "v1.1"].sort());
      // The untagged manifests of the removed tags went too (pushed days ago); the kept ones pull.
      for (const tag of gone.slice(0, 5)) assert.equal((await client.request("GET", `/v2/acme/app/manifests/${manifestOf.get(tag)}`)).status, 404);
      assert.equal((await client.request("GET", "/v2/acme/app/manifests/build-019")).status, 200);
      const events = await server.store.db.selectFrom("events").select(["type", "subject", "body", "actor"]).where("type", "like", "%registry.%").execute();
      const deletedTags = events.filter((e) => e.type.endsWith("registry.tag.deleted.v1")).map((e) => (JSON.parse(e.body) as { name: string }).name);
      assert.deepEqual(deletedTags.sort(), gone);
      const applied = events.filter((e) => e.type.endsWith("registry.retention.applied.v1"));
      assert.equal(applied.length, 1);
      const outcome = JSON.parse(applied[0].body) as { repoUid: string; deletedTags: string[]; deletedManifests: string[]; keptTags: number };
      assert.equal(outcome.repoUid, repoUid);
      assert.equal(outcome.deletedTags.length, gone.length);
      assert.equal(outcome.deletedManifests.length, gone.length);
      assert.equal(outcome.keptTags, 24);
      assert.deepEqual(JSON.parse(applied[0].actor), { subject: "", act: { via: "registry retention" } });
      // Another pass finds nothing to do.
      await server.server.workers.get("retention")!.drain!();
      assert.equal((await server.store.db.selectFrom("events").select("id").where("type", "like", "%retention.applied%").execute()).length, 1);
      // Each removed image's config blob is named by no manifest now: gc frees it.
      const gc = JSON.parse(await runCli("registry", "gc", "--grace", "0s", "--db", dbUrl, "--registry-dir", server.contentDir)) as { blobs: number };
      assert.equal(gc.blobs, gone.length);
    });

    test("two processes on one database: one pass at a time, and one that lost its lease removes nothing", async () => {
      await setPolicy(policyUid, { keepLast: 5, keepTags: [], untaggedGrace: "86400s" });
      const replicas = await Promise.all([openStore(dbUrl), openStore(dbUrl)]);
      try {
        const config = { intervalMs: 3600_000, leaseMs: 60_000 };
        // Both start a pass at once: whichever runs removes each tag, once (one may find the other's pass done).
        const passes = await Promise.all(replicas.map((store, i) => leasedRetentionPass(store.db, { holder: `replica-${i}`, config, typePrefix: "dev.platform", force: true })));
        const removed = passes.flatMap((p) => p ?? []).flatMap((r) => r.deletedTags);
        assert.deepEqual(removed.sort(), [...builds(4, 20), "v1.0", "v1.1"].sort());
        const deleted = await server.store.db.selectFrom("events").select("subject").where("type", "like", "%registry.tag.deleted%").execute();
        assert.equal(new Set(deleted.map((e) => e.subject)).size, deleted.length, "no tag deleted twice");

        // While one holds the lease, the other's pass does not start, forced or not.
        assert.ok(await takeRetentionLease(replicas[0].db, "holder", Date.now(), { ...config, force: true }));
        assert.equal(await leasedRetentionPass(replicas[1].db, { holder: "other", config, typePrefix: "dev.platform", force: true }), undefined);
        await replicas[0].db.updateTable("job_leases").set({ holder: "", lease_until: 0 }).execute();

        // A holder whose lease lapsed and was taken over stops at its next repo, removing nothing.
        await setPolicy(policyUid, { keepLast: 1, keepTags: [] });
        const [a, b] = replicas;
        assert.ok(await takeRetentionLease(a.db, "stalled", Date.now(), { ...config, force: true }));
        await a.db.updateTable("job_leases").set({ lease_until: 0 }).execute();
        assert.ok(await takeRetentionLease(b.db, "taker", Date.now(), { ...config, force: true }));
        await assert.rejects(runRetentionPass(a.db, { now: Date.now(), typePrefix: "dev.platform", holder: "stalled" }), RetentionLeaseLost);
        assert.equal((await tagNames()).length, 6, "nothing went");
      } finally {
        await Promise.all(replicas.map((s) => s.close()));
      }
    });
  });
}
