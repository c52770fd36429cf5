import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { after, before, describe, test } from "node:test";
import { GroupsService } from "../../gen/platform/iam/v2/groups_service_pb.js";
import { ReposService } from "../../gen/platform/registry/v2/repos_service_pb.js";
import { TagsService } from "../../gen/platform/registry/v2/tags_service_pb.js";
import { builtInRole } from "../../src/access/capabilities.js";
import { newChildUid } from "../../src/aip/uidp.js";
import { insertIdentity } from "../../src/domains/iam/store/identities.js";
import { bindRole } from "../../src/domains/iam/store/role-bindings.js";
import { openStore, type Store } from "../../src/server/open-store.js";
import { bootstrapChild, CHILD_API_URL, runCli, type Bootstrapped } from "../support/child-server.js";
import { CLUSTER_REGISTRY_URL, roundRobinWire, startCluster, type Cluster, type RoutedCall } from "../support/cluster.js";
import { dropFresh, testDatabases } from "../support/databases.js";
import { buildImage } from "../support/oci-layout.js";
import { startOidcIssuer, type OidcIssuer } from "../support/oidc-issuer.js";
import { registryClient, sha256 } from "../support/registry-push.js";
import { startS3Server, type TestS3 } from "../support/s3-server.js";
import { methodOf } from "../support/wires.js";
import { newLedger, runWriter, verifyStore, type TagLog } from "../support/write-load.js";

/**
 * Three `serve` processes started together on one empty PostgreSQL schema, with their blobs in one
 * S3-compatible bucket (s3rver), behind a client that sends each request to the next replica (and
 * the next protocol) in turn: they must behave as one server. Also `npm run test:cluster`.
 */
const REPLICAS = 3;
const postgres = (await testDatabases()).find((d) => d.name === "postgres");
const skip = postgres === undefined ? "TEST_DIALECTS excludes postgres" : postgres.skip;
const digestOf = (text: string) => sha256(Buffer.from(text));

describe(`${REPLICAS} replicas on one PostgreSQL and one bucket`, { skip, timeout: 600_000 }, () => {
  let url = "";
  let s3: TestS3;
  let issuer: OidcIssuer;
  let cluster: Cluster;
  let boot: Bootstrapped;
  /** A platform token of the owner for the registry's audience (from the CLI). */
  let registryOwnerToken: string;
  let store: Store;
  const calls: RoutedCall[] = [];
  let wire: ReturnType<typeof roundRobinWire>;

  before(async () => {
    url = await postgres!.fresh();
    s3 = await startS3Server();
    issuer = await startOidcIssuer();
    cluster = await startCluster({
      size: REPLICAS,
      db: url,
      registryStorage: "s3://registry/cluster",
      env: s3.env,
      args: ["--db-pool-size", "4", "--allow-http-issuers", "--allow-private-issuers"],
    });
    boot = await bootstrapChild(url, "cluster");
    registryOwnerToken = (await runCli("token", "--identity", boot.ownerUid, "--db", url, "--api-url", CHILD_API_URL, "--audience", CLUSTER_REGISTRY_URL)).trim();
    store = await openStore(url, { poolSize: 2 });
    wire = roundRobinWire(cluster.replicas, calls);
  });
  after(async () => {
    wire?.close();
    await cluster?.stop();
    await store?.close();
    await issuer?.close();
    await s3?.close();
    if (url) await dropFresh(url);
  });

  const replicaOf = (since: number) => calls.slice(since).map((c) => c.replica);

  test("started together on an empty schema, every replica serves, and accepts tokens the others signed", async () => {
    const getOrg = (apiUrl: string, token: string) => fetch(`${apiUrl}/iam/v2/groups/${boot.org.uid}`, { headers: { authorization: `Bearer ${token}` } });
    for (const replica of cluster.replicas) assert.equal((await getOrg(replica.apiUrl, boot.ownerToken)).status, 200, "the bootstrap command's token");

    // A key rotated in while they run: a token it signed is accepted by every replica at once.
    const rotated = JSON.parse(await runCli("keys", "rotate", "--activate-in", "0s", "--db", url)) as { kid: string };
    const fresh = (await runCli("token", "--identity", boot.ownerUid, "--db", url, "--api-url", CHILD_API_URL)).trim();
    assert.equal(JSON.parse(Buffer.from(fresh.split(".")[0], "base64url").toString()).kid, rotated.kid);
    for (const replica of cluster.replicas) assert.equal((await getOrg(replica.apiUrl, fresh)).status, 200, "a token of the rotated key");

    // A registry token from one replica's /token pulls from the others.
    const repo = await wire.call(methodOf(ReposService, "CreateRepo"), { parent: boot.org.uid, repo: { name: "tokens" } }, { method: "POST", path: `/registry/v2/repos/${boot.org.uid}`, body: { name: "tokens" } }, boot.ownerToken);
    assert.equal(repo.code, 0, repo.message);
    const basic = `Basic ${Buffer.from(`_token:${registryOwnerToken}`).toString("base64")}`;
    const issued = await fetch(`${cluster.replicas[0].registryUrl}/token?scope=repository:cluster/tokens:pull`, { headers: { authorization: basic } });
    assert.equal(issued.status, 200);
    const registryToken = ((await issued.json()) as { token: string }).token;
    for (const replica of cluster.replicas.slice(1)) {
      const tags = await fetch(`${replica.registryUrl}/v2/cluster/tokens/tags/list`, { headers: { authorization: `Bearer ${registryToken}` } });
      assert.equal(tags.status, 200);
      assert.deepEqual(await tags.json(), { name: "cluster/tokens", tags: [] });
    }

    // A workload token exchanged at one replica (which fetched and cached the issuer's keys) acts at the others.
    const identity = newChildUid(boot.org.uid);
    const now = Date.now();
    await insertIdentity(store.db, {
      uid: identity,
      group_uid: boot.org.uid,
      name: "ci",
      description: "",
      claim_match: JSON.stringify({ issuer: issuer.url, subject: "repo:cluster/app" }),
      static_keys: "",
      last_seen_time: null,
      create_time: now,
      update_time: now,
    });
    await bindRole(store.db, boot.org.uid, identity, builtInRole("viewer").uid, now);
    for (const [i, replica] of cluster.replicas.entries()) {
      const answer = await fetch(`${replica.apiUrl}/sts/exchange?identity=${identity}`, { method: "POST", headers: { authorization: `Bearer ${await issuer.issue({ sub: "repo:cluster/app" })}` } });
      assert.equal(answer.status, 200, `exchange at replica ${i}`);
      const { token } = (await answer.json()) as { token: string };
      for (const other of cluster.replicas) assert.equal((await getOrg(other.apiUrl, token)).status, 200, `token from replica ${i} at ${other.apiUrl}`);
    }
  });

  test("pagination: each page from another replica, the page tokens of one accepted by the next", async () => {
    const parent = await wire.call(methodOf(GroupsService, "CreateGroup"), { parent: boot.org.uid, group: { name: "pages" } }, { method: "POST", path: `/iam/v2/groups/${boot.org.uid}`, body: { name: "pages" } }, boot.ownerToken);
    assert.equal(parent.code, 0, parent.message);
    const parentUid = parent.body!.uid as string;
    const created = new Set<string>();
    for (let i = 0; i < 23; i++) {
      const out = await wire.call(methodOf(GroupsService, "CreateGroup"), { parent: parentUid, group: { name: `g${i}` } }, { method: "POST", path: `/iam/v2/groups/${parentUid}`, body: { name: `g${i}` } }, boot.ownerToken);
      assert.equal(out.code, 0, out.message);
      created.add(out.body!.uid as string);
    }
    const since = calls.length;
    const seen: string[] = [];
    let pageToken = "";
    let pages = 0;
    do {
      const query = `uidp.children_of=${parentUid}&page_size=4&order_by=name&page_token=${encodeURIComponent(pageToken)}`;
      const page = await wire.call(
        methodOf(GroupsService, "ListGroups"),
        { uidp: { childrenOf: parentUid }, pageSize: 4, orderBy: "name", pageToken },
        { method: "GET", path: `/iam/v2/groups?${query}` },
        boot.ownerToken,
      );
      assert.equal(page.code, 0, page.message);
      assert.equal(Number(page.body!.totalCount), 23);
      seen.push(...(page.body!.groups as Array<{ uid: string }>).map((g) => g.uid));
      pageToken = (page.body!.nextPageToken as string | undefined) ?? "";
      pages++;
    } while (pageToken !== "");
    assert.equal(pages, 6);
    assert.deepEqual(new Set(replicaOf(since)), new Set([0, 1, 2]), "the pages came from every replica");
    assert.equal(seen.length, 23, "no group twice");
    assert.deepEqual(new Set(seen), created);
  });

  test("concurrent creates of one name, spread over the replicas: exactly one wins, the others ALREADY_EXISTS", async () => {
    const since = calls.length;
    const groups = await Promise.all(
      Array.from({ length: 12 }, () =>
        wire.call(methodOf(GroupsService, "CreateGroup"), { parent: boot.org.uid, group: { name: "contested" } }, { method: "POST", path: `/iam/v2/groups/${boot.org.uid}`, body: { name: "contested" } }, boot.ownerToken),
      ),
    );
    const repos = await Promise.all(
      Array.from({ length: 12 }, () =>
        wire.call(methodOf(ReposService, "CreateRepo"), { parent: boot.org.uid, repo: { name: "contested" } }, { method: "POST", path: `/registry/v2/repos/${boot.org.uid}`, body: { name: "contested" } }, boot.ownerToken),
      ),
    );
    for (const outcomes of [groups, repos]) {
      assert.deepEqual(outcomes.map((o) => o.code).sort((a, b) => a - b), [0, ...Array(11).fill(6)], outcomes.map((o) => o.message).join("; "));
    }
    assert.deepEqual(new Set(replicaOf(since)), new Set([0, 1, 2]));
  });

  test("concurrent moves of one tag over the replicas: every move in the history, once, in order, ending at the tag", async () => {
    const repo = await wire.call(methodOf(ReposService, "CreateRepo"), { parent: boot.org.uid, repo: { name: "moving" } }, { method: "POST", path: `/registry/v2/repos/${boot.org.uid}`, body: { name: "moving" } }, boot.ownerToken);
    assert.equal(repo.code, 0, repo.message);
    const repoUid = repo.body!.uid as string;
    const digests = Array.from({ length: 30 }, (_, i) => digestOf(`move-${i}`));
    const moves = await Promise.all(
      digests.map((digest) =>
        wire.call(methodOf(TagsService, "CreateTag"), { parent: repoUid, tag: { name: "latest", digest } }, { method: "POST", path: `/registry/v2/tags/${repoUid}`, body: { name: "latest", digest } }, boot.ownerToken),
      ),
    );
    assert.deepEqual(moves.map((m) => m.code), Array(30).fill(0), moves.map((m) => m.message).join("; "));

    const token = registryOwnerToken;
    for (const replica of cluster.replicas) {
      const res = await fetch(`${replica.registryUrl}/v2/cluster/moving/_service/history/latest`, { headers: { authorization: `Bearer ${token}` } });
      assert.equal(res.status, 200);
      const { history } = (await res.json()) as { history: Array<{ digest: string; updateTimestamp: string }> };
      assert.deepEqual([...history.map((h) => h.digest)].sort(), [...digests].sort(), "every acknowledged move, once");
      const times = history.map((h) => Date.parse(h.updateTimestamp));
      assert.ok(times.every((t, i) => i === 0 || t >= times[i - 1]), "oldest first");
      const tag = await store.db.selectFrom("tags").select("digest").where("repo_uid", "=", repoUid).where("name", "=", "latest").executeTakeFirstOrThrow();
      assert.equal(history.at(-1)!.digest, tag.digest, "the newest record is where the tag is");
    }
  });

  test("a chunked push whose requests land on every replica; each replica serves the image", async () => {
    const token = registryOwnerToken;
    const spread = registryClient(
      cluster.replicas.map((r) => r.registryUrl),
      token,
    );
    const layer = randomBytes(3 * 1024 * 1024 + 17);
    const hosts = await spread.pushBlobInChunks("cluster/app", layer, 700 * 1024);
    assert.deepEqual(new Set(hosts), new Set(cluster.replicas.map((r) => r.registryUrl)), "start, chunks and finish on every replica");
    const image = buildImage({ architecture: "amd64", label: "cluster" });
    await spread.pushImage("cluster/app", "v1", image);
    for (const replica of cluster.replicas) {
      const one = registryClient([replica.registryUrl], token);
      const blob = await one.request("GET", `/v2/cluster/app/blobs/${sha256(layer)}`);
      assert.equal(blob.status, 200);
      assert.ok(blob.bytes.equals(layer), `the layer from ${replica.registryUrl}`);
      const manifest = await one.request("GET", "/v2/cluster/app/manifests/v1", { headers: { accept: image.manifest.mediaType } });
      assert.ok(manifest.bytes.equals(image.manifest.bytes));
    }
  });

  test("kill -9 of one replica under write load: nothing acknowledged is lost, the others keep answering", async () => {
    const repo = await wire.call(methodOf(ReposService, "CreateRepo"), { parent: boot.org.uid, repo: { name: "load" } }, { method: "POST", path: `/registry/v2/repos/${boot.org.uid}`, body: { name: "load" } }, boot.ownerToken);
    assert.equal(repo.code, 0, repo.message);
    const ledger = newLedger();
    const writers = 6;
    const tags: TagLog[] = Array.from({ length: writers }, (_, i) => ({ repoUid: repo.body!.uid as string, name: `writer-${i}`, sent: [], lastAcked: -1, acked: 0 }));
    ledger.tags.push(...tags);
    const since = calls.length;
    let stop = false;
    const running = tags.map((tag) => runWriter({ wire, token: boot.ownerToken, orgUid: boot.org.uid, tag, ledger, stop: () => stop }));
    await new Promise((resolve) => setTimeout(resolve, 1500));
    const victim = 2;
    const killedAt = Date.now();
    await cluster.kill(victim);
    await new Promise((resolve) => setTimeout(resolve, 2500));
    stop = true;
    await Promise.all(running);

    const load = calls.slice(since);
    const survivors = load.filter((c) => c.replica !== victim);
    const acked = ledger.groups.size + ledger.repos.size + tags.reduce((n, t) => n + t.acked, 0);
    assert.ok(acked > 12, `only ${acked} writes were acknowledged`);
    assert.deepEqual(
      survivors.filter((c) => c.outcome.code !== 0).map((c) => `${c.replica}: ${c.outcome.code} ${c.outcome.message}`),
      [],
      "the other replicas answered every call",
    );
    assert.ok(survivors.some((c) => c.at > killedAt + 1000), "and went on after the kill");
    assert.deepEqual(
      load.filter((c) => c.replica === victim && c.outcome.code !== 0 && c.answered).map((c) => `${c.outcome.code} ${c.outcome.message}`),
      [],
      "the killed replica's failures are broken connections, not answers",
    );
    await verifyStore(store.db, ledger);
  });
});
