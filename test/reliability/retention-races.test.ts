import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { MEDIA_TYPE } from "../../src/domains/registry/manifest.js";
import { findRepoByPath } from "../../src/domains/registry/store/repos.js";
import { dropFresh, testDatabases } from "../support/databases.js";
import { blobOf, buildImage } from "../support/oci-layout.js";
import { registryClient, type RegistryClient } from "../support/registry-push.js";
import { startTestServer, type TestServer } from "../support/test-server.js";

/**
 * Retention passes racing pushes that name the manifests a pass is removing: each round pushes
 * untagged images into every repo and ages them past the policy's grace, then re-tags some and
 * pushes indexes naming others (HTTP PUTs to the registry host) while the server's retention worker
 * runs pass after pass. Afterwards every acknowledged push resolves (its tag, and each child of an
 * index it pushed), every refused one was refused cleanly (MANIFEST_BLOB_UNKNOWN for an index
 * whose child went first, or UNAVAILABLE; nothing written), and what nothing named went. On SQLite
 * and on PostgreSQL. `RETENTION_RACE_ROUNDS` (default 3) and `RETENTION_RACE_REPOS` (default 10)
 * run it longer.
 */

const ROUNDS = Number(process.env.RETENTION_RACE_ROUNDS ?? 3);
const REPOS = Number(process.env.RETENTION_RACE_REPOS ?? 10);
/** Each round, per repo: images re-tagged, indexes pushed (each naming two images), images nothing names. */
const RETAGGED = 4;
const INDEXES = 3;
const UNNAMED = 2;
/** Untagged images pushed into each repo each round: the re-tagged ones, the indexes' children, then the unnamed. */
const SEEDS = RETAGGED + 2 * INDEXES + UNNAMED;
/** Pushes in flight at once. */
const CONCURRENCY = 12;
const HOUR = 3_600_000;

interface Push {
  repo: string;
  tag: string;
  digest: string;
  /** The manifests an index names; none for an image. */
  children: string[];
  /** What is PUT. */
  blob: { bytes: Buffer; mediaType: string };
  status?: number;
  body?: string;
}

const dir = mkdtempSync(join(tmpdir(), "platform-api-retention-races-"));
after(() => rmSync(dir, { recursive: true, force: true }));

for (const database of await testDatabases()) {
  describe(`retention passes racing pushes on ${database.name}`, { skip: database.skip }, () => {
    let server: TestServer;
    let dbUrl: string;
    let client: RegistryClient;
    const repos = Array.from({ length: REPOS }, (_, i) => `acme/race-${String(i).padStart(2, "0")}`);
    // Each repo its own config and layer: pushes to different repos share no blob row.
    const bases = new Map(repos.map((repo) => [repo, buildImage({ architecture: "amd64", label: repo })]));

    before(async () => {
      dbUrl = database.name === "sqlite" ? join(dir, "races.db") : await database.fresh();
      server = await startTestServer({ dbUrl, logLevel: "silent" });
      const token = (await server.server.tokens.issue({ subject: server.ownerUid, audience: "http://registry.test" })).token;
      client = registryClient([server.registryUrl], token);
      for (const [repo, base] of bases) for (const blob of [base.config, ...base.layers]) await client.pushBlob(repo, blob.bytes);
      const policy = await fetch(`${server.apiUrl}/registry/v2/retentionPolicies/${server.org.uid}`, {
        method: "POST",
        headers: { authorization: `Bearer ${server.ownerToken}`, "content-type": "application/json" },
        body: JSON.stringify({ untaggedGrace: "3600s" }),
      });
      assert.equal(policy.status, 200, await policy.text());
    });
    after(async () => {
      await server?.close();
      if (database.name === "postgres") await dropFresh(dbUrl);
    });

    /** An image of the repo's config and layer, told apart by an annotation. */
    const seed = (repo: string, label: string) => {
      const base = bases.get(repo)!;
      return blobOf(
        Buffer.from(
          JSON.stringify({
            schemaVersion: 2,
            mediaType: MEDIA_TYPE.ociManifest,
            config: { mediaType: base.config.mediaType, digest: base.config.digest, size: base.config.size },
            layers: base.layers.map((l) => ({ mediaType: l.mediaType, digest: l.digest, size: l.size })),
            annotations: { seed: label },
          }),
        ),
        MEDIA_TYPE.ociManifest,
      );
    };
    const indexOver = (children: ReturnType<typeof seed>[]) =>
      blobOf(
        Buffer.from(
          JSON.stringify({
            schemaVersion: 2,
            mediaType: MEDIA_TYPE.ociIndex,
            manifests: children.map((c, i) => ({ mediaType: c.mediaType, digest: c.digest, size: c.size, platform: { architecture: `arch${i}`, os: "linux" } })),
          }),
        ),
        MEDIA_TYPE.ociIndex,
      );
    const put = (repo: string, reference: string, blob: { bytes: Buffer; mediaType: string }) =>
      client.request("PUT", `/v2/${repo}/manifests/${reference}`, { body: blob.bytes, headers: { "content-type": blob.mediaType } });
    const get = (repo: string, reference: string) =>
      client.request("GET", `/v2/${repo}/manifests/${reference}`, { headers: { accept: `${MEDIA_TYPE.ociManifest}, ${MEDIA_TYPE.ociIndex}` } });

    /** The code of a registry error body, if it is one. */
    const codeOf = (body: string): string | undefined => {
      try {
        return (JSON.parse(body) as { errors?: Array<{ code: string }> }).errors?.[0]?.code;
      } catch {
        return undefined;
      }
    };

    /** Runs `work` on every item, `limit` at a time. */
    async function pooled<T>(items: T[], limit: number, work: (item: T) => Promise<void>): Promise<void> {
      let next = 0;
      await Promise.all(Array.from({ length: limit }, async () => {
        while (next < items.length) await work(items[next++]);
      }));
    }

    test(`${ROUNDS} rounds over ${REPOS} repos: every acknowledged push resolves afterwards, every refused one was refused cleanly`, { timeout: 60_000 + ROUNDS * REPOS * 2_000 }, async (t) => {
      const acknowledged: Push[] = [];
      const refused: Push[] = [];
      const unnamedSeeds: Array<[string, string]> = [];
      let passes = 0;
      for (let round = 0; round < ROUNDS; round++) {
        // Untagged images in every repo, then aged past the grace: the next pass removes those nothing names.
        const seeds = new Map(repos.map((repo) => [repo, Array.from({ length: SEEDS }, (_, i) => seed(repo, `${round}-${i}`))]));
        await pooled(repos, CONCURRENCY, async (repo) => {
          for (const s of seeds.get(repo)!) {
            const res = await put(repo, s.digest, s);
            assert.equal(res.status, 201, res.bytes.toString());
          }
        });
        const repoUids = await Promise.all(repos.map(async (repo) => (await findRepoByPath(server.store.db, "acme", repo.slice("acme/".length)))!.uid));
        await server.store.db.updateTable("manifests").set({ create_time: Date.now() - 2 * HOUR }).where("repo_uid", "in", repoUids).execute();

        for (const repo of repos) for (const s of seeds.get(repo)!.slice(RETAGGED + 2 * INDEXES)) unnamedSeeds.push([repo, s.digest]);
        // Per repo, indexes and re-tags alternate; the repos' lists are interleaved, so that pushes of each kind land in every repo while the pass is at it.
        const lists = repos.map((repo) => {
          const mine = seeds.get(repo)!;
          const images: Push[] = mine.slice(0, RETAGGED).map((s, i) => ({ repo, tag: `r${round}-image-${i}`, digest: s.digest, children: [], blob: s }));
          const indexes: Push[] = Array.from({ length: INDEXES }, (_, i) => {
            const children = mine.slice(RETAGGED + 2 * i, RETAGGED + 2 * i + 2);
            const index = indexOver(children);
            return { repo, tag: `r${round}-index-${i}`, digest: index.digest, children: children.map((c) => c.digest), blob: index };
          });
          return Array.from({ length: Math.max(RETAGGED, INDEXES) }, (_, i) => [indexes[i], images[i]]).flat().filter((p) => p !== undefined);
        });
        const pushes = Array.from({ length: RETAGGED + INDEXES }, (_, i) => lists.map((list) => list[i])).flat();

        // Passes, one after another, from when the first wave of pushes is answered (on SQLite a pass runs whole between two requests: those answered before it are checked by it).
        let racing = true;
        let passing: Promise<void> | undefined;
        const worker = server.server.workers.get("retention")!;
        const startPasses = async () => {
          while (racing) {
            await worker.drain!();
            passes++;
            // A pass on SQLite need not wait for I/O: between passes, the pushes' requests get their turn.
            await new Promise((resolve) => setImmediate(resolve));
          }
        };
        let answered = 0;
        try {
          await pooled(pushes, CONCURRENCY, async (push) => {
            const res = await put(push.repo, push.tag, push.blob);
            push.status = res.status;
            push.body = res.bytes.toString();
            (res.status === 201 ? acknowledged : refused).push(push);
            if (++answered === CONCURRENCY) passing = startPasses();
          });
        } finally {
          racing = false;
          await passing;
        }
      }
      // One more pass: what the pushes named stays.
      await server.server.workers.get("retention")!.drain!();

      const lost: string[] = [];
      await pooled(acknowledged, CONCURRENCY, async (push) => {
        const problems: string[] = [];
        const tagged = await get(push.repo, push.tag);
        if (tagged.status !== 200 || tagged.headers.get("docker-content-digest") !== push.digest) problems.push(`the tag answers ${tagged.status}`);
        for (const child of push.children) {
          const res = await get(push.repo, child);
          if (res.status !== 200) problems.push(`its child ${child} answers ${res.status}`);
        }
        if (problems.length > 0) lost.push(`${push.repo}:${push.tag}: ${problems.join(", ")}`);
      });
      const unclean: string[] = [];
      await pooled(refused, CONCURRENCY, async (push) => {
        const code = codeOf(push.body!);
        // An index whose child went first is refused; any push may find the store busy (retry).
        const lostRace = push.status === 400 && code === "MANIFEST_BLOB_UNKNOWN" && push.children.length > 0;
        if (!lostRace && !(push.status === 503 && code === "UNAVAILABLE")) unclean.push(`${push.repo}:${push.tag} answered ${push.status} ${push.body}`);
        if ((await get(push.repo, push.tag)).status !== 404) unclean.push(`${push.repo}:${push.tag} was refused but its tag exists`);
        if (push.children.length > 0 && (await get(push.repo, push.digest)).status !== 404) unclean.push(`${push.repo}:${push.tag} was refused but its index ${push.digest} exists`);
      });
      const answers = new Map<string, number>();
      for (const push of refused) {
        const answer = `${push.status} ${codeOf(push.body!)}`;
        answers.set(answer, (answers.get(answer) ?? 0) + 1);
      }
      const summary = `${acknowledged.length} acknowledged and ${refused.length} refused pushes (${[...answers].map(([a, n]) => `${n} ${a}`).join(", ")}), ${passes} passes`;
      assert.deepEqual(lost, [], `${lost.length} acknowledged pushes no longer resolve (${summary})`);
      assert.deepEqual(unclean, [], `pushes not refused cleanly (${summary})`);
      assert.ok(acknowledged.length > 0, summary);
      // The images nothing named went: the passes did remove while the pushes ran.
      for (const [repo, digest] of unnamedSeeds) assert.equal((await get(repo, digest)).status, 404, `${repo}@${digest} was named by nothing, yet stays`);
      t.diagnostic(summary);
    });
  });
}
