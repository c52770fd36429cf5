import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { fromJson, type JsonObject } from "@bufbuild/protobuf";
import { createRemoteJWKSet, jwtVerify } from "jose";
import { SubscriptionsService } from "../../gen/platform/events/v2/subscriptions_service_pb.js";
import { ReposService } from "../../gen/platform/registry/v2/repos_service_pb.js";
import { TagsService } from "../../gen/platform/registry/v2/tags_service_pb.js";
import { newChildUid } from "../../src/aip/uidp.js";
import { defaultLimits } from "../../src/config.js";
import { insertSubscription } from "../../src/domains/events/store/subscriptions.js";
import { insertGroup } from "../../src/domains/iam/store/groups.js";
import { createLogger } from "../../src/logger.js";
import { createFileContentStore } from "../../src/domains/registry/content/content-store.js";
import { createServer } from "../../src/server/server.js";
import { openStore } from "../../src/server/open-store.js";
import { createHash } from "node:crypto";
import { importImages } from "../../src/domains/registry/import.js";
import { buildImage, writeLayout, type BuiltImage } from "../support/oci-layout.js";
import { serveOverWires } from "../support/over-wires.js";
import { startTestServer, type TestServer } from "../support/test-server.js";
import { messageJson } from "../../src/aip/message-json.js";
import { RepoSchema } from "../../gen/platform/registry/v2/repo_pb.js";
import { connectWire, methodOf, WIRE_NAMES, type Wire } from "../support/wires.js";

/** A CloudEvent as a sink received it. */
interface Received {
  headers: http.IncomingHttpHeaders;
  body: { actor: { subject: string }; body: JsonObject };
}

/** A loopback HTTP receiver; `answer` picks each response's status. */
async function startReceiver(answer: (n: number) => number = () => 200) {
  const received: Received[] = [];
  let calls = 0;
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const status = answer(++calls);
      if (status >= 200 && status < 300) received.push({ headers: req.headers, body: JSON.parse(Buffer.concat(chunks).toString("utf8")) as Received["body"] });
      res.writeHead(status).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  return {
    url,
    received,
    calls: () => calls,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

async function waitFor(condition: () => boolean, what: string, ms = 5_000): Promise<void> {
  const end = Date.now() + ms;
  while (!condition()) {
    if (Date.now() > end) assert.fail(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

const fast = { allowLocalSinks: true, pollIntervalMs: 20, initialBackoffMs: 20, maxBackoffMs: 100, timeoutMs: 2_000 };

describe("SubscriptionsService on every wire", () => {
  const { server, wire } = serveOverWires({ events: fast });

  for (const wireName of WIRE_NAMES) {
    test(`Create, Get, List, Delete over ${wireName}`, async () => {
      const call = (name: string, request: JsonObject, rest: { method: string; path: string; body?: JsonObject }) =>
        wire(wireName).call(methodOf(SubscriptionsService, name), request, rest, server().ownerToken);
      const sink = `http://127.0.0.1:9/${wireName}`;
      const made = await call("CreateSubscription", { parent: server().org.uid, subscription: { sink } }, { method: "POST", path: `/events/v2/subscriptions/${server().org.uid}`, body: { sink } });
      assert.equal(made.code, 0, made.message);
      const uid = made.body!.uid as string;
      assert.match(uid, new RegExp(`^${server().org.uid}/[0-9a-f]{16}$`));
      assert.equal(made.body!.sink, sink);
      const read = await call("GetSubscription", { uid }, { method: "GET", path: `/events/v2/subscriptions/${uid}` });
      assert.equal(read.code, 0, read.message);
      assert.equal(read.body!.sink, sink);
      for (const out of [made, read]) {
        assert.ok(out.body!.updateTime, "updateTime is shown (spec 2)");
        assert.equal(out.body!.updateTime, out.body!.createTime, "a subscription is not updated: its update time is its create time");
      }
      const listed = await call("ListSubscriptions", { uidp: { ids: [uid] } }, { method: "GET", path: `/events/v2/subscriptions?uidp.ids=${uid}` });
      assert.deepEqual((listed.body!.subscriptions as JsonObject[]).map((s) => s.uid), [uid]);
      assert.equal((listed.body!.subscriptions as JsonObject[])[0].updateTime, made.body!.updateTime);
      assert.equal(listed.body!.totalCount, "1");
      const gone = await call("DeleteSubscription", { uid }, { method: "DELETE", path: `/events/v2/subscriptions/${uid}` });
      assert.equal(gone.code, 0, gone.message);
      const missing = await call("GetSubscription", { uid }, { method: "GET", path: `/events/v2/subscriptions/${uid}` });
      assert.equal(missing.code, 5);
    });
  }
});

describe("sinks are https on public addresses by default (SSRF)", () => {
  const { server, wire } = serveOverWires();
  for (const sink of ["http://example.com/hook", "https://127.0.0.1/hook", "https://localhost/hook", "https://10.1.2.3/", "https://169.254.169.254/latest", "https://[::1]/", "https://[::ffff:127.0.0.1]/", "ftp://example.com/", "not a url"]) {
    test(`refused: ${sink}`, async () => {
      const out = await wire("connect").call(methodOf(SubscriptionsService, "CreateSubscription"), { parent: server().org.uid, subscription: { sink } }, { method: "POST", path: "" }, server().ownerToken);
      assert.equal(out.code, 3, out.message);
      assert.match(out.message ?? "", /subscription\.sink/);
      if (sink.startsWith("http:")) assert.match(out.message ?? "", /plain http is not allowed: serve --events-allow-local-sinks\)/, "names the flag that allows it");
    });
  }
});

describe("events are delivered, signed, in order, and only for committed changes", () => {
  let server: TestServer;
  let wire: Wire;
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  let folder: string;
  const call = (service: typeof ReposService | typeof TagsService | typeof SubscriptionsService, name: string, request: JsonObject) =>
    wire.call(methodOf(service, name), request, { method: "POST", path: "" }, server.ownerToken);

  before(async () => {
    server = await startTestServer({ events: fast });
    wire = connectWire(server.apiPort);
    receiver = await startReceiver();
    folder = newChildUid(server.org.uid);
    await insertGroup(server.store.db, { uid: folder, parent_uid: server.org.uid, name: "events", description: "", create_time: 1, update_time: 1 });
    const sub = await call(SubscriptionsService, "CreateSubscription", { parent: server.org.uid, subscription: { sink: receiver.url } });
    assert.equal(sub.code, 0, sub.message);
  });
  after(async () => {
    wire.close();
    await server.close();
    await receiver.close();
  });

  test("a repo and a tag's create, update and delete in a subfolder arrive once each, in order, with the CloudEvent headers and a token verified against the JWKS", async () => {
    const repo = await call(ReposService, "CreateRepo", { parent: folder, repo: { name: "events/app" } });
    assert.equal(repo.code, 0, repo.message);
    const repoUid = repo.body!.uid as string;
    assert.equal((await call(ReposService, "UpdateRepo", { repo: { uid: repoUid, description: "d" } })).code, 0);
    const tag = await call(TagsService, "CreateTag", { parent: repoUid, tag: { name: "v1", digest: `sha256:${"a".repeat(64)}` } });
    assert.equal(tag.code, 0, tag.message);
    assert.equal((await call(TagsService, "DeleteTag", { uid: tag.body!.uid as string })).code, 0);
    assert.equal((await call(ReposService, "DeleteRepo", { uid: repoUid })).code, 0);
    const registryEvents = () => receiver.received.filter((r) => String(r.headers["ce-type"]).includes(".registry."));
    await waitFor(() => registryEvents().length >= 5, "five events");
    await new Promise((r) => setTimeout(r, 100));
    const received = registryEvents();
    assert.deepEqual(
      received.map((r) => r.headers["ce-type"]),
      ["platform.registry.repo.created", "platform.registry.repo.updated", "platform.registry.tag.created", "platform.registry.tag.deleted", "platform.registry.repo.deleted"].map((t) => `dev.platform.api.${t}.v1`),
    );
    const first = received[0];
    assert.equal(first.headers["ce-specversion"], "1.0");
    assert.equal(first.headers["ce-subject"], repoUid);
    assert.equal(first.headers["ce-group"], folder);
    assert.match(String(first.headers["ce-id"]), /^[0-9a-f-]{36}$/);
    assert.ok(!Number.isNaN(Date.parse(String(first.headers["ce-time"]))));
    assert.equal(first.headers["content-type"], "application/json");
    assert.equal(first.headers["ce-audience"], "customer");
    assert.equal(first.headers["ce-bodytype"], "platform.registry.v2.Repo");
    assert.equal(first.body.actor.subject, server.ownerUid);
    assert.deepEqual(first.body.body, messageJson(RepoSchema, fromJson(RepoSchema, repo.body!)), "a created event's body is the created resource as every answer renders it, uid and times included");
    assert.equal(first.body.body.uid, repoUid);
    assert.equal(received[1].headers["ce-bodytype"], "platform.registry.v2.Repo");
    assert.deepEqual([received[1].body.body.uid, received[1].body.body.description], [repoUid, "d"], "an updated event's body is the resource as updated");
    assert.deepEqual([received[2].headers["ce-bodytype"], received[2].body.body.uid], ["platform.registry.v2.Tag", tag.body!.uid]);
    assert.deepEqual([received[4].headers["ce-bodytype"], received[4].body.body], ["platform.registry.v2.DeleteRepoRequest", { uid: repoUid }], "a deleted event's body names the uid");
    assert.equal(received[2].headers["ce-group"], folder, "a tag's group is its repo's group");
    const jwks = createRemoteJWKSet(new URL(`${server.apiUrl}/.well-known/jwks.json`));
    for (const event of received) {
      const token = String(event.headers.authorization).replace(/^Bearer /, "");
      const { payload } = await jwtVerify(token, jwks, { issuer: "http://api.test", audience: receiver.url });
      assert.equal(payload.sub, `webhook:${server.org.uid}`);
    }
    assert.equal(new Set(received.map((r) => r.headers["ce-id"])).size, 5, "each event once");
  });

  test("a change that fails (and rolls back) emits nothing", async () => {
    const before = receiver.received.length;
    const events = async () => (await server.store.db.selectFrom("events").select((eb) => eb.fn.countAll<number>().as("n")).executeTakeFirstOrThrow()).n;
    const count = Number(await events());
    const made = await call(ReposService, "CreateRepo", { parent: folder, repo: { name: "events/twice" } });
    assert.equal(made.code, 0);
    const dup = await call(ReposService, "CreateRepo", { parent: folder, repo: { name: "events/twice" } });
    assert.equal(dup.code, 6);
    const missing = await call(ReposService, "DeleteRepo", { uid: newChildUid(folder) });
    assert.equal(missing.code, 5);
    assert.equal(Number(await events()), count + 1, "only the committed create wrote an event");
    await waitFor(() => receiver.received.length >= before + 1, "the committed create");
    await new Promise((r) => setTimeout(r, 150));
    assert.equal(receiver.received.length, before + 1);
  });

  test("another organization's subscription sees nothing of ours; a deleted subscription stops receiving", async () => {
    const other = await startReceiver();
    const otherOrg = "f".repeat(40);
    await insertGroup(server.store.db, { uid: otherOrg, parent_uid: "", name: "other", description: "", create_time: 1, update_time: 1 });
    await insertSubscription(server.store.db, { uid: newChildUid(otherOrg), group_uid: otherOrg, sink: other.url, create_time: 1 });
    const mine = await startReceiver();
    const mineSub = await call(SubscriptionsService, "CreateSubscription", { parent: folder, subscription: { sink: mine.url } });
    assert.equal(mineSub.code, 0, mineSub.message);
    assert.equal((await call(ReposService, "CreateRepo", { parent: folder, repo: { name: "events/seen" } })).code, 0);
    await waitFor(() => mine.received.some((r) => r.headers["ce-type"] === "dev.platform.api.platform.registry.repo.created.v1"), "the folder's subscriber");
    const seen = mine.received.length;
    assert.equal((await call(SubscriptionsService, "DeleteSubscription", { uid: mineSub.body!.uid as string })).code, 0);
    assert.equal((await call(ReposService, "CreateRepo", { parent: folder, repo: { name: "events/unseen" } })).code, 0);
    await new Promise((r) => setTimeout(r, 200));
    assert.equal(mine.received.length, seen, "nothing after the delete");
    assert.equal(other.received.length, 0);
    await Promise.all([other.close(), mine.close()]);
  });
});

test("a sink answering 500 three times then 200 gets the event; the subscription shows the failure, then the success", async () => {
  const server = await startTestServer({ events: fast });
  const wire = connectWire(server.apiPort);
  const receiver = await startReceiver((n) => (n <= 3 ? 500 : 200));
  try {
    const sub = await wire.call(methodOf(SubscriptionsService, "CreateSubscription"), { parent: server.org.uid, subscription: { sink: receiver.url } }, { method: "POST", path: "" }, server.ownerToken);
    await waitFor(() => receiver.received.length === 1 || receiver.calls() >= 4, "the delivery");
    await waitFor(() => receiver.received.length === 1, "the fourth attempt");
    assert.equal(receiver.calls(), 4);
    assert.equal(receiver.received[0].headers["ce-type"], "dev.platform.api.events.subscription.created.v1");
    const read = await wire.call(methodOf(SubscriptionsService, "GetSubscription"), { uid: sub.body!.uid as string }, { method: "GET", path: "" }, server.ownerToken);
    const delivery = read.body!.delivery as JsonObject;
    assert.equal(delivery.lastFailureStatus, 500);
    assert.equal(delivery.lastFailureMessage, "the sink answered HTTP 500");
    assert.ok(Date.parse(String(delivery.lastFailureTime)) <= Date.parse(String(delivery.lastSuccessTime)), "the failures came before the success");
    assert.equal(delivery.pendingCount ?? "0", "0");
    const failures = server.logs.map((l) => JSON.parse(l) as JsonObject).filter((l) => l.msg === "event delivery failed; will retry");
    assert.deepEqual(
      failures.map((l) => [l.subscription, l.attempts, l.status]),
      [1, 2, 3].map((n) => [sub.body!.uid, n, 500]),
      "a log line per failed attempt, with its status",
    );
  } finally {
    wire.close();
    await server.close();
    await receiver.close();
  }
});

test("events written before the server stops are delivered after it starts again, each as soon as the one before it (no poll between)", async () => {
  const dir = mkdtempSync(join(tmpdir(), "platform-api-events-"));
  const dbUrl = join(dir, "db.sqlite");
  const receiver = await startReceiver();
  try {
    // First run: the dispatcher does not poll before the server stops.
    const first = await startTestServer({ dbUrl, events: { ...fast, pollIntervalMs: 3_600_000 } });
    const wire = connectWire(first.apiPort);
    const sub = await wire.call(methodOf(SubscriptionsService, "CreateSubscription"), { parent: first.org.uid, subscription: { sink: receiver.url } }, { method: "POST", path: "" }, first.ownerToken);
    assert.equal(sub.code, 0, sub.message);
    const repo = await wire.call(methodOf(ReposService, "CreateRepo"), { parent: first.org.uid, repo: { name: "restart/app" } }, { method: "POST", path: "" }, first.ownerToken);
    assert.equal(repo.code, 0, repo.message);
    const more = 10;
    for (let i = 0; i < more; i++) {
      const r = await wire.call(methodOf(ReposService, "CreateRepo"), { parent: first.org.uid, repo: { name: `restart/app${i}` } }, { method: "POST", path: "" }, first.ownerToken);
      assert.equal(r.code, 0, r.message);
    }
    wire.close();
    await first.close();
    assert.equal(receiver.received.length, 0, "nothing was delivered by the first run");
    const store = await openStore(dbUrl);
    const contentDir = mkdtempSync(join(tmpdir(), "platform-api-content-"));
    const second = await createServer(
      store,
      // It polls once, at start: every later claim follows the end of a delivery.
      { apiUrl: "http://api.test", registryUrl: "http://registry.test", events: { ...fast, pollIntervalMs: 3_600_000 }, logLevel: "silent", limits: defaultLimits },
      createLogger("silent"),
      createFileContentStore(contentDir),
    );
    second.startWork();
    try {
      await waitFor(() => receiver.received.some((r) => r.headers["ce-type"] === "dev.platform.api.platform.registry.repo.created.v1"), "the delivery after the restart");
      assert.equal(receiver.received.find((r) => r.headers["ce-type"] === "dev.platform.api.platform.registry.repo.created.v1")?.headers["ce-subject"], repo.body!.uid);
      await waitFor(() => receiver.received.length === 2 + more, "every event, one after another");
      assert.deepEqual(
        receiver.received.map((r) => r.headers["ce-type"]),
        ["events.subscription.created", ...Array<string>(1 + more).fill("platform.registry.repo.created")].map((t) => `dev.platform.api.${t}.v1`),
      );
    } finally {
      await second.close();
      await store.close();
      rmSync(contentDir, { recursive: true, force: true });
    }
  } finally {
    await receiver.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

test("the registry host's changes are events in their transaction: the repo a push creates, each push, tag moves by pushes and imports (created, updated, nothing when it stays), tag deletes by tag and by digest", async () => {
  const server = await startTestServer({ events: fast });
  const receiver = await startReceiver();
  const dir = mkdtempSync(join(tmpdir(), "platform-api-layout-"));
  try {
    await insertSubscription(server.store.db, { uid: newChildUid(server.org.uid), group_uid: server.org.uid, sink: receiver.url, create_time: 1 });
    const { token } = await server.server.tokens.issue({ subject: server.ownerUid, audience: "http://registry.test" });
    const put = async (method: string, path: string, body: Buffer | undefined, contentType: string, expected = 201) => {
      const res = await fetch(`${server.registryUrl}${path}`, { method, body: body && new Uint8Array(body), headers: { authorization: `Bearer ${token}`, "content-type": contentType } });
      assert.ok(res.status === expected, `${method} ${path}: ${res.status} ${await res.text()}`);
    };
    const push = async (image: BuiltImage, tag: string) => {
      for (const blob of [image.config, ...image.layers]) {
        await put("POST", `/v2/acme/pushed/blobs/uploads/?digest=sha256:${createHash("sha256").update(blob.bytes).digest("hex")}`, blob.bytes, "application/octet-stream");
      }
      await put("PUT", `/v2/acme/pushed/manifests/${tag}`, image.manifest.bytes, image.manifest.mediaType);
    };
    await push(buildImage({ architecture: "amd64", label: "one" }), "v1");
    const two = buildImage({ architecture: "amd64", label: "two" });
    await push(two, "v1");
    await push(two, "v1");
    const tagEvents = () => receiver.received.filter((r) => String(r.headers["ce-type"]).includes(".registry.tag."));
    await waitFor(() => tagEvents().length >= 2, "the pushes' tag events");
    writeLayout(dir, { architectures: ["arm64"], ref: "imported" });
    await importImages(server.store, { repository: "acme/pushed", paths: [dir], now: Date.now(), content: server.content });
    await waitFor(() => tagEvents().length >= 3, "the import's tag event");
    await put("DELETE", "/v2/acme/pushed/manifests/imported", undefined, "application/json", 202);
    const twoDigest = `sha256:${createHash("sha256").update(two.manifest.bytes).digest("hex")}`;
    await put("DELETE", `/v2/acme/pushed/manifests/${twoDigest}`, undefined, "application/json", 202);
    await waitFor(() => tagEvents().length >= 5, "the deletes' tag events");
    await new Promise((r) => setTimeout(r, 100));
    assert.deepEqual(
      tagEvents().map((r) => [r.headers["ce-type"], r.body.body.name]),
      [
        ["created", "v1"],
        ["updated", "v1"],
        ["created", "imported"],
        ["deleted", "imported"],
        ["deleted", "v1"],
      ].map(([verb, name]) => [`dev.platform.api.platform.registry.tag.${verb}.v1`, name]),
    );
    const repoCreated = receiver.received.filter((r) => r.headers["ce-type"] === "dev.platform.api.platform.registry.repo.created.v1");
    assert.equal(repoCreated.length, 1, "the first push created the repo, once");
    assert.equal(repoCreated[0].headers["ce-bodytype"], "platform.registry.v2.Repo");
    assert.equal(repoCreated[0].body.body.name, "pushed");
    const pushes = receiver.received.filter((r) => r.headers["ce-type"] === "dev.platform.registry.push.v1");
    assert.deepEqual(
      pushes.map((r) => [r.body.body.repository, r.body.body.tag, r.body.body.type]),
      [0, 1, 2].map(() => ["acme/pushed", "v1", "manifest"]),
      "each manifest push is a registry.push event",
    );
    assert.equal(pushes[2].body.body.digest, twoDigest);
    assert.equal(tagEvents()[1].body.body.digest, twoDigest, "an updated tag's body is the Tag where it points now");
    assert.ok(tagEvents().every((r) => r.headers["ce-bodytype"] === "platform.registry.v2.Tag"));
    assert.equal(tagEvents()[0].headers["ce-group"], server.org.uid);
    // Who did it: the pushing and deleting identity on the registry host, nobody for the operator's import.
    const actor = (r: (typeof pushes)[number]) => (r.body as unknown as { actor: { subject: string; act: { via: string } } }).actor;
    for (const event of [...pushes, ...repoCreated]) assert.deepEqual(actor(event), { subject: server.ownerUid, act: { via: "registry push" } });
    assert.deepEqual(
      tagEvents().map((r) => [actor(r).subject, actor(r).act.via]),
      [
        [server.ownerUid, "registry push"],
        [server.ownerUid, "registry push"],
        ["", "registry import"],
        [server.ownerUid, "registry delete"],
        [server.ownerUid, "registry delete"],
      ],
    );
  } finally {
    await server.close();
    await receiver.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

test("the dispatcher prunes delivered events after the retention; an event still owed stays", async () => {
  const server = await startTestServer({ events: { ...fast, retentionMs: 200, pruneIntervalMs: 50 } });
  const wire = connectWire(server.apiPort);
  const receiver = await startReceiver();
  const stuck = await startReceiver(() => 503);
  try {
    const subscribe = (sink: string) =>
      wire.call(methodOf(SubscriptionsService, "CreateSubscription"), { parent: server.org.uid, subscription: { sink } }, { method: "POST", path: "" }, server.ownerToken);
    assert.equal((await subscribe(receiver.url)).code, 0);
    const events = async () => (await server.store.db.selectFrom("events").select(["id", "type"]).execute()).map((e) => e.type);
    await waitFor(() => receiver.received.length === 1, "the delivery");
    const end = Date.now() + 5_000;
    while ((await events()).length > 0) {
      if (Date.now() > end) assert.fail(`not pruned: ${(await events()).join(", ")}`);
      await new Promise((r) => setTimeout(r, 50));
    }
    assert.equal((await subscribe(stuck.url)).code, 0);
    await waitFor(() => stuck.calls() >= 2, "retries to the failing sink");
    await new Promise((r) => setTimeout(r, 400));
    assert.deepEqual(await events(), ["dev.platform.api.events.subscription.created.v1"], "the event owed to the failing sink is kept");
  } finally {
    wire.close();
    await server.close();
    await Promise.all([receiver.close(), stuck.close()]);
  }
});
