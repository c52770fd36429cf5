import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { promisify } from "node:util";
import { UpstreamsService } from "../../gen/platform/registry/v2/upstreams_service_pb.js";
import { builtInRole } from "../../src/access/capabilities.js";
import { newChildUid } from "../../src/aip/uidp.js";
import { bindRole, insertIdentity } from "../../src/domains/iam/index.js";
import { findRepoByPath } from "../../src/domains/registry/store/repos.js";
import { readTagHistory } from "../../src/domains/registry/store/tag-history.js";
import { bootstrapChild, CHILD_API_URL, runCli, startChildServer, type Bootstrapped, type ChildServer } from "../support/child-server.js";
import { dropFresh, testDatabases } from "../support/databases.js";
import { dockerRegistrySkip, startDockerRegistry, TEST_HTPASSWD_PASSWORD, type DockerRegistry } from "../support/docker-registry.js";
import { writeLayout, type BuiltLayout } from "../support/oci-layout.js";
import { sampleSum, scrape } from "../support/prometheus-text.js";
import { skopeoSkip } from "../support/skopeo.js";
import { freePort, startTestServer, type TestServer } from "../support/test-server.js";
import { startUpstreamProxy, type UpstreamProxy } from "../support/upstream-proxy.js";
import { grpcWire, methodOf, restWire, type Wire } from "../support/wires.js";

/**
 * Pull-through from upstream registries, through real wires: Debian's docker-registry (CNCF
 * distribution) as the upstream behind a small proxy that counts, cuts and corrupts what it
 * forwards, and a second platform-api as the upstream (the Docker token flow with a pull token's
 * basic credentials); skopeo pulls through our registry host. Upstreams are managed over REST
 * and gRPC. On SQLite and PostgreSQL.
 */

const run = promisify(execFile);
const skip = skopeoSkip ?? dockerRegistrySkip;
const dir = mkdtempSync(join(tmpdir(), "platform-api-pull-through-"));
after(() => rmSync(dir, { recursive: true, force: true }));

async function skopeo(...args: string[]): Promise<string> {
  const { stdout } = await run("skopeo", ["--insecure-policy", ...args], { timeout: 60_000, env: { ...process.env, HOME: dir } });
  return stdout;
}
const blob = (layout: string, digest: string) => readFileSync(join(layout, "blobs", "sha256", digest.slice("sha256:".length)));
const blobNames = (layout: string) => readdirSync(join(layout, "blobs", "sha256")).sort();
const topDigest = (layout: string) => (JSON.parse(readFileSync(join(layout, "index.json"), "utf8")) as { manifests: Array<{ digest: string }> }).manifests[0].digest;
let outputs = 0;
const out = () => join(dir, `out-${++outputs}`);

/** Pushes a layout to a registry without authentication over plain http. */
const pushPlain = (layout: BuiltLayout, ref: string, target: string) => skopeo("copy", "--dest-tls-verify=false", `oci:${layout.dir}:${ref}`, `docker://${target}`);

for (const database of await testDatabases()) {
  describe(`pull-through on ${database.name}`, { skip: skip ?? database.skip }, () => {
    let server: TestServer;
    let dbUrl: string;
    let upstream: DockerRegistry;
    let proxy: UpstreamProxy;
    let host: string;
    let creds: string;
    let registryToken: string;
    let rest: Wire;
    let grpc: Wire;
    let upstreamUid: string;
    const layouts: Record<string, BuiltLayout> = {};
    const create = methodOf(UpstreamsService, "CreateUpstream");
    const get = methodOf(UpstreamsService, "GetUpstream");
    const list = methodOf(UpstreamsService, "ListUpstreams");
    const update = methodOf(UpstreamsService, "UpdateUpstream");
    const remove = methodOf(UpstreamsService, "DeleteUpstream");

    const createOver = (wire: Wire, body: Record<string, unknown>, token = server.ownerToken) =>
      wire.call(create, { parent: server.org.uid, upstream: body } as never, { method: "POST", path: `/registry/v2/upstreams/${server.org.uid}`, body: body as never }, token);
    const pullThrough = (name: string, target: string, ...flags: string[]) => skopeo("copy", ...flags, "--src-tls-verify=false", "--src-creds", creds, `docker://${host}/${name}`, target);
    const registryGet = (path: string, method = "GET") => fetch(`http://${host}${path}`, { method, headers: { authorization: `Bearer ${registryToken}` } });

    /** An identity of the organization bound to `role` there, and its API token. */
    async function member(role: "viewer" | "editor"): Promise<string> {
      const uid = newChildUid(server.org.uid);
      const now = Date.now();
      await insertIdentity(server.store.db, { uid, group_uid: server.org.uid, name: `a ${role}`, description: "", claim_match: "", static_keys: "", last_seen_time: null, create_time: now, update_time: now });
      await bindRole(server.store.db, server.org.uid, uid, builtInRole(role).uid, now);
      return (await server.server.tokens.issue({ subject: uid, audience: server.apiUrl })).token;
    }

    before(async () => {
      upstream = await startDockerRegistry(join(dir, `upstream-${database.name}`));
      proxy = await startUpstreamProxy(upstream.url);
      const port = await freePort();
      host = `127.0.0.1:${port}`;
      dbUrl = await database.fresh();
      server = await startTestServer({
        dbUrl,
        registryUrl: `http://${host}`,
        registryPort: port,
        apiUrl: "listen",
        upstreamRegistries: { allowHttp: true, allowPrivateAddresses: true, timeoutMs: 3000 },
      });
      registryToken = (await server.server.tokens.issue({ subject: server.ownerUid, audience: `http://${host}` })).token;
      creds = `_token:${registryToken}`;
      rest = restWire(server.apiPort);
      grpc = grpcWire(server.apiPort);
      for (const [name, layerBytes] of [["a", [30_000, 2000]], ["b", [12_000]], ["c", [9000]], ["bad", [20_000]], ["big", [3_000_000]]] as const) {
        layouts[name] = writeLayout(join(dir, `${database.name}-${name}`), { architectures: ["amd64"], ref: "v1", layerBytes: [...layerBytes], label: `${database.name}-${name}` });
      }
      layouts.multi = writeLayout(join(dir, `${database.name}-multi`), { architectures: ["amd64", "arm64"], ref: "v1", label: `${database.name}-multi` });
      await pushPlain(layouts.a, "v1", `127.0.0.1:${upstream.port}/library/app:v1`);
      await pushPlain(layouts.b, "v1", `127.0.0.1:${upstream.port}/library/app:b`);
      await pushPlain(layouts.bad, "v1", `127.0.0.1:${upstream.port}/library/bad:v1`);
      await pushPlain(layouts.big, "v1", `127.0.0.1:${upstream.port}/library/big:v1`);
      await skopeo("copy", "--all", "--dest-tls-verify=false", `oci:${layouts.multi.dir}:v1`, `docker://127.0.0.1:${upstream.port}/library/multi:v1`);
    });
    after(async () => {
      rest?.close();
      grpc?.close();
      await server?.close();
      await proxy?.close();
      await upstream?.stop();
      if (dbUrl) await dropFresh(dbUrl);
    });

    test("Upstreams over REST and gRPC: create, get, list, update, delete; the password never answered; a viewer may not create", async () => {
      const body = { name: "docker hub", url: proxy.url, repoPrefix: "mirror/", upstreamPrefix: "library/", username: "mirror", password: "s3cret", tagFreshness: "1s" };
      const made = await createOver(rest, body);
      assert.equal(made.code, 0, made.message);
      upstreamUid = String(made.body!.uid);
      assert.equal(made.body!.password, undefined);
      assert.equal(made.body!.hasPassword, true);
      const stored = await server.store.db.selectFrom("upstreams").select("password").where("uid", "=", upstreamUid).executeTakeFirstOrThrow();
      assert.match(stored.password, /^sealed:v1:/);
      for (const wire of [rest, grpc]) {
        const anonymous = await wire.call(get, { uid: upstreamUid }, { method: "GET", path: `/registry/v2/upstreams/${upstreamUid}` });
        assert.equal(anonymous.code, 16, `${wire.name}: ${anonymous.message}`);
        const again = await wire.call(get, { uid: upstreamUid }, { method: "GET", path: `/registry/v2/upstreams/${upstreamUid}` }, server.ownerToken);
        assert.equal(again.code, 0, `${wire.name}: ${again.message}`);
        assert.equal(again.body!.password, undefined, wire.name);
        assert.equal(again.body!.url, proxy.url, wire.name);
        assert.ok(!JSON.stringify(again.body).includes("s3cret"), wire.name);
        const listed = await wire.call(list, {}, { method: "GET", path: "/registry/v2/upstreams" }, server.ownerToken);
        assert.equal(listed.code, 0, `${wire.name}: ${listed.message}`);
        assert.ok(!JSON.stringify(listed.body).includes("s3cret"), wire.name);
        assert.deepEqual((listed.body!.upstreams as Array<{ uid: string }>).map((u) => u.uid), [upstreamUid], wire.name);
      }
      const viewer = await member("viewer");
      for (const wire of [rest, grpc]) {
        const refused = await createOver(wire, { ...body, name: "other", repoPrefix: "other/" }, viewer);
        assert.equal(refused.code, 7, `${wire.name}: ${refused.message}`);
        const seen = await wire.call(get, { uid: upstreamUid }, { method: "GET", path: `/registry/v2/upstreams/${upstreamUid}` }, viewer);
        assert.equal(seen.code, 0, `${wire.name}: a viewer lists upstreams`);
      }
      const invalid = await createOver(grpc, { name: "bad", url: "ftp://x", repoPrefix: "no-slash", tagFreshness: "0s" });
      assert.equal(invalid.code, 3);
      const fields = invalid.details.flatMap((d) => (d.fieldViolations as Array<{ field: string }> | undefined) ?? []).map((v) => v.field).sort();
      assert.deepEqual(fields, ["upstream.repo_prefix", "upstream.tag_freshness", "upstream.url"]);
      const overlapping = await createOver(rest, { ...body, name: "inner", repoPrefix: "mirror/inner/" });
      assert.equal(overlapping.code, 3, overlapping.message);
      const taken = await createOver(rest, { ...body, name: "again" });
      assert.equal(taken.code, 6, taken.message);

      // An update without the password keeps it; the mask naming it clears it.
      const renamed = await grpc.call(update, { upstream: { uid: upstreamUid, name: "hub" }, updateMask: "name" } as never, { method: "PATCH", path: "" }, server.ownerToken);
      assert.equal(renamed.code, 0, renamed.message);
      assert.equal(renamed.body!.hasPassword, true);
      const cleared = await rest.call(update, {}, { method: "PATCH", path: `/registry/v2/upstreams/${upstreamUid}?updateMask=username,password`, body: { username: "", password: "" } }, server.ownerToken);
      assert.equal(cleared.code, 0, cleared.message);
      assert.ok(!cleared.body!.hasPassword);

      const extra = await createOver(rest, { ...body, name: "extra", repoPrefix: "extra/" });
      assert.equal(extra.code, 0, extra.message);
      const deleted = await grpc.call(remove, { uid: String(extra.body!.uid) }, { method: "DELETE", path: "" }, server.ownerToken);
      assert.equal(deleted.code, 0, deleted.message);
    });

    test("pull through by tag and by digest: the upstream's bytes, stored as ordinary content with Tag History", async () => {
      const byTag = out();
      await pullThrough("acme/mirror/app:v1", `oci:${byTag}:v1`);
      assert.equal(topDigest(byTag), layouts.a.top.digest);
      assert.deepEqual(blobNames(byTag), blobNames(layouts.a.dir));
      for (const b of [layouts.a.images[0].config, ...layouts.a.images[0].layers]) assert.deepEqual(blob(byTag, b.digest), b.bytes);

      const byDigest = out();
      await pullThrough(`acme/mirror/app@${layouts.b.top.digest}`, `oci:${byDigest}:pinned`);
      assert.equal(topDigest(byDigest), layouts.b.top.digest);

      const multi = out();
      await pullThrough("acme/mirror/multi:v1", `oci:${multi}:v1`, "--all");
      assert.equal(topDigest(multi), layouts.multi.index!.digest);
      assert.deepEqual(blobNames(multi), blobNames(layouts.multi.dir));

      const repo = await findRepoByPath(server.store.db, "acme", "mirror/app");
      assert.ok(repo, "the repo was created by the pull");
      const history = await readTagHistory(server.store.db, repo.uid, "v1", { limit: 10 });
      assert.deepEqual(history.map((h) => h.digest), [layouts.a.top.digest]);
      const tags = await registryGet("/v2/acme/mirror/app/tags/list");
      assert.deepEqual(((await tags.json()) as { tags: string[] }).tags, ["v1"]);
    });

    test("the upstream unreachable: what is held is served (and counted); what is not is a clear 502", async () => {
      await new Promise((resolve) => setTimeout(resolve, 1100)); // past the tag's freshness: the pull asks the upstream
      proxy.down = true;
      try {
        const held = out();
        await pullThrough("acme/mirror/app:v1", `oci:${held}:v1`);
        assert.equal(topDigest(held), layouts.a.top.digest);
        const { samples } = await scrape(server.metricsPort);
        assert.ok(sampleSum(samples, "registry_upstream_fallbacks_total", { upstream: proxy.url }) >= 1);

        const missing = await registryGet("/v2/acme/mirror/never/manifests/v1");
        assert.equal(missing.status, 502);
        const { errors } = (await missing.json()) as { errors: Array<{ code: string; message: string }> };
        assert.equal(errors[0].code, "UNAVAILABLE");
        assert.match(errors[0].message, new RegExp(`upstream ${proxy.url.replace(/[.]/g, "\\.")} failed`));
      } finally {
        proxy.down = false;
      }
    });

    test("a tag moved upstream is seen after its freshness, and Tag History records the move", async () => {
      await pushPlain(layouts.c, "v1", `127.0.0.1:${upstream.port}/library/app:v1`);
      const fresh = await registryGet("/v2/acme/mirror/app/manifests/v1", "HEAD");
      assert.equal(fresh.headers.get("docker-content-digest"), layouts.c.top.digest, "the freshness (1s) had passed since the last check");
      const moved = out();
      await pullThrough("acme/mirror/app:v1", `oci:${moved}:v1`);
      assert.equal(topDigest(moved), layouts.c.top.digest);
      const repo = await findRepoByPath(server.store.db, "acme", "mirror/app");
      const history = await readTagHistory(server.store.db, repo!.uid, "v1", { limit: 10 });
      assert.deepEqual(history.map((h) => h.digest), [layouts.a.top.digest, layouts.c.top.digest]);
      // Within its freshness, the tag is answered without asking the upstream.
      const heads = proxy.count("HEAD", "/v2/library/app/manifests/v1");
      await registryGet("/v2/acme/mirror/app/manifests/v1", "HEAD");
      assert.equal(proxy.count("HEAD", "/v2/library/app/manifests/v1"), heads);
    });

    test("a corrupt upstream blob is refused and not kept", async () => {
      const layer = layouts.bad.images[0].layers[0].digest;
      proxy.corrupt.add(layer);
      try {
        await assert.rejects(pullThrough("acme/mirror/bad:v1", `oci:${out()}:v1`));
        assert.equal(await server.content.size(layer), undefined);
        const row = await server.store.db.selectFrom("blobs").select("digest").where("digest", "=", layer).executeTakeFirst();
        assert.equal(row, undefined);
        const again = await registryGet(`/v2/acme/mirror/bad/blobs/${layer}`).then(
          async (res) => Buffer.from(await res.arrayBuffer()),
          () => undefined,
        ).catch(() => undefined);
        assert.ok(again === undefined || again.length !== layouts.bad.images[0].layers[0].size, "never served whole");
      } finally {
        proxy.corrupt.delete(layer);
      }
    });

    test("20 concurrent pulls of one blob fetch it from the upstream once", async () => {
      const manifest = await registryGet("/v2/acme/mirror/big/manifests/v1");
      assert.equal(manifest.status, 200);
      const layer = layouts.big.images[0].layers[0];
      proxy.blobDelayMs = 300;
      try {
        const answers = await Promise.all(Array.from({ length: 20 }, () => registryGet(`/v2/acme/mirror/big/blobs/${layer.digest}`).then(async (res) => ({ status: res.status, bytes: Buffer.from(await res.arrayBuffer()) }))));
        for (const answer of answers) {
          assert.equal(answer.status, 200);
          assert.ok(answer.bytes.equals(layer.bytes));
        }
      } finally {
        proxy.blobDelayMs = 0;
      }
      assert.equal(proxy.count("GET", `/v2/library/big/blobs/${layer.digest}`), 1);
    });
  });
}

describe("pull-through from a second platform-api (the Docker token flow with a pull token)", { skip }, () => {
  let source: TestServer;
  let server: TestServer;
  let image: BuiltLayout;
  let host: string;
  let creds: string;

  before(async () => {
    const sourcePort = await freePort();
    source = await startTestServer({ registryUrl: `http://127.0.0.1:${sourcePort}`, registryPort: sourcePort, apiUrl: "listen" });
    const sourceToken = (await source.server.tokens.issue({ subject: source.ownerUid, audience: source.registryUrl })).token;
    image = writeLayout(join(dir, "token-flow"), { architectures: ["amd64"], ref: "v1", layerBytes: [15_000] });
    await skopeo("copy", "--dest-tls-verify=false", "--dest-creds", `_token:${sourceToken}`, `oci:${image.dir}:v1`, `docker://127.0.0.1:${sourcePort}/acme/base:v1`);
    const port = await freePort();
    host = `127.0.0.1:${port}`;
    server = await startTestServer({ registryUrl: `http://${host}`, registryPort: port, apiUrl: "listen", upstreamRegistries: { allowHttp: true, allowPrivateAddresses: true } });
    creds = `_token:${(await server.server.tokens.issue({ subject: server.ownerUid, audience: `http://${host}` })).token}`;
  });
  after(async () => {
    await server?.close();
    await source?.close();
  });

  const api = async (target: TestServer, method: string, path: string, body?: unknown) => {
    const res = await fetch(`${target.apiUrl}${path}`, { method, headers: { authorization: `Bearer ${target.ownerToken}`, "content-type": "application/json" }, body: body === undefined ? undefined : JSON.stringify(body) });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  };

  test("a plain http upstream is refused without --allow-http-upstreams", async () => {
    const refused = await api(source, "POST", `/registry/v2/upstreams/${source.org.uid}`, { name: "plain", url: "http://registry.example.com", repoPrefix: "mirror/" });
    assert.equal(refused.status, 400);
    assert.match(JSON.stringify(refused.body), /allow-http-upstreams/);
  });

  test("pulls through with a token from the upstream's realm, asked with the pull token's basic credentials", async () => {
    const pullToken = await api(source, "POST", `/iam/v2/pullTokens/${source.org.uid}`, { name: "mirror" });
    assert.equal(pullToken.status, 200, JSON.stringify(pullToken.body));
    const made = await api(server, "POST", `/registry/v2/upstreams/${server.org.uid}`, {
      name: "source",
      url: source.registryUrl,
      repoPrefix: "hub/",
      username: pullToken.body.username,
      password: pullToken.body.password,
    });
    assert.equal(made.status, 200, JSON.stringify(made.body));
    const target = join(dir, "token-flow-out");
    await skopeo("copy", "--src-tls-verify=false", "--src-creds", creds, `docker://${host}/acme/hub/acme/base:v1`, `oci:${target}:v1`);
    assert.equal(topDigest(target), image.top.digest);
    assert.deepEqual(blobNames(target), blobNames(image.dir));
  });
});

describe("pull-through from docker-registry with TLS and htpasswd (a serve process trusting its certificate)", { skip }, () => {
  let upstream: DockerRegistry;
  let child: ChildServer;
  let owner: Bootstrapped;
  let registryToken: string;
  const REGISTRY_URL = "http://registry.test";
  let image: BuiltLayout;
  const tlsDir = join(dir, "tls");

  before(async () => {
    mkdirSync(tlsDir, { recursive: true });
    const [cert, key] = [join(tlsDir, "upstream.crt"), join(tlsDir, "upstream.key")];
    await run("openssl", [
      ...["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-days", "2"],
      ...["-keyout", key, "-out", cert, "-subj", "/CN=upstream", "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1"],
    ]);
    upstream = await startDockerRegistry(join(tlsDir, "registry"), { tls: { cert, key }, user: "mirror" });
    image = writeLayout(join(tlsDir, "image"), { architectures: ["amd64"], ref: "v1", layerBytes: [25_000] });
    await skopeo("copy", "--dest-tls-verify=false", "--dest-creds", `mirror:${TEST_HTPASSWD_PASSWORD}`, `oci:${image.dir}:v1`, `docker://127.0.0.1:${upstream.port}/team/app:v1`);
    const db = join(tlsDir, "platform.db");
    owner = await bootstrapChild(db, "acme");
    // The operator's way to trust a private CA: Node's NODE_EXTRA_CA_CERTS.
    child = await startChildServer({ db, registryDir: join(tlsDir, "blobs"), args: ["--registry-url", REGISTRY_URL, "--allow-private-upstreams"], env: { NODE_EXTRA_CA_CERTS: cert } });
    registryToken = (await runCli("token", "--identity", owner.ownerUid, "--db", db, "--api-url", CHILD_API_URL, "--audience", REGISTRY_URL)).trim();
  });
  after(async () => {
    child?.child.kill("SIGTERM");
    await child?.exit;
    await upstream?.stop();
  });

  const api = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(`${child.apiUrl}${path}`, { method, headers: { authorization: `Bearer ${owner.ownerToken}`, "content-type": "application/json" }, body: body === undefined ? undefined : JSON.stringify(body) });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  };
  /** GETs `path` of the child's registry host with the owner's platform token for the registry. */
  const pull = (path: string) => fetch(`${child.registryUrl}${path}`, { headers: { authorization: `Bearer ${registryToken}`, accept: "application/vnd.oci.image.manifest.v1+json" } });

  test("an http URL is refused without --allow-http-upstreams; https with basic authentication pulls through", async () => {
    const plain = await api("POST", `/registry/v2/upstreams/${owner.org.uid}`, { name: "plain", url: `http://127.0.0.1:${upstream.port}`, repoPrefix: "plain/" });
    assert.equal(plain.status, 400, JSON.stringify(plain.body));
    const made = await api("POST", `/registry/v2/upstreams/${owner.org.uid}`, { name: "team", url: upstream.url, repoPrefix: "tls/", username: "mirror", password: TEST_HTPASSWD_PASSWORD });
    assert.equal(made.status, 200, JSON.stringify(made.body));
    const wrong = await api("POST", `/registry/v2/upstreams/${owner.org.uid}`, { name: "wrong", url: upstream.url, repoPrefix: "wrong/", username: "mirror", password: "not-it" });
    assert.equal(wrong.status, 200, JSON.stringify(wrong.body));

    const manifest = await pull("/v2/acme/tls/team/app/manifests/v1");
    assert.equal(manifest.status, 200, await manifest.clone().text());
    assert.deepEqual(Buffer.from(await manifest.arrayBuffer()), image.top.bytes);
    for (const b of [image.images[0].config, ...image.images[0].layers]) {
      const got = await pull(`/v2/acme/tls/team/app/blobs/${b.digest}`);
      assert.equal(got.status, 200);
      assert.deepEqual(Buffer.from(await got.arrayBuffer()), b.bytes);
    }

    const refused = await pull("/v2/acme/wrong/team/app/manifests/v1");
    assert.equal(refused.status, 502);
    const { errors } = (await refused.json()) as { errors: Array<{ code: string; message: string }> };
    assert.equal(errors[0].code, "UNAVAILABLE");
    assert.match(errors[0].message, /refused the credentials \(HTTP 401\)/);
  });
});
