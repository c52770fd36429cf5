import assert from "node:assert/strict";
import * as http from "node:http";
import * as http2 from "node:http2";
import type { AddressInfo } from "node:net";
import { after, before, beforeEach, describe, it } from "node:test";
import { create, createRegistry } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { Code, ConnectError, createContextValues } from "@connectrpc/connect";
import type { Interceptor, ServiceImpl } from "@connectrpc/connect";
import { connectNodeAdapter } from "@connectrpc/connect-node";
import { ErrorInfoSchema, ResourceInfoSchema, file_google_rpc_error_details } from "../../gen/google/rpc/error_details_pb.js";
import { GroupSchema } from "../../gen/platform/iam/v2/group_pb.js";
import type { Group } from "../../gen/platform/iam/v2/group_pb.js";
import { GroupsService } from "../../gen/platform/iam/v2/groups_service_pb.js";
import type { ListGroupsRequest, UpdateGroupRequest } from "../../gen/platform/iam/v2/groups_service_pb.js";
import { PingService } from "../../gen/platform/ping/v2/ping_pb.js";
import { protocolKey } from "../../src/interceptors/request-context.js";
import { createUnaryCaller, recordingRouter, type RecordedService } from "../../src/transport/rpc/call.js";
import { createRestTranscoder } from "../../src/transport/rest/transcoder.js";
import type { RestHandler } from "../../src/transport/rest/transcoder.js";

const ORG = "a".repeat(40);
const FOLDER = `${ORG}/${"b".repeat(16)}`;
const MAX_BODY = 1024;

interface Call {
  rpc: string;
  protocol: string;
  authorization: string | null;
  requestId: string | null;
  message: unknown;
}

// In-memory GroupsService that records what it received.
const groups = new Map<string, Group>();
let lastList: ListGroupsRequest | undefined;
let lastUpdate: UpdateGroupRequest | undefined;
let lastCreate: { parent: string; group?: Group } | undefined;

/** A group whose read waits until the call's signal aborts, and why it was aborted. */
const SLOW = `${ORG}/${"5".repeat(16)}`;
let slowStarted = false;
let slowAborted: unknown;

const groupsImpl: ServiceImpl<typeof GroupsService> = {
  async getGroup(req, ctx) {
    if (req.uid === SLOW) {
      slowStarted = true;
      if (!ctx.signal.aborted) await new Promise((resolve) => ctx.signal.addEventListener("abort", resolve));
      slowAborted = ctx.signal.reason;
      throw ctx.signal.reason;
    }
    const g = groups.get(req.uid);
    if (g) return g;
    throw new ConnectError(`Group ${req.uid} not found`, Code.NotFound, undefined, [
      { desc: ErrorInfoSchema, value: { reason: "NOT_FOUND", domain: "platform-api" } },
      { desc: ResourceInfoSchema, value: { resourceType: "platform.iam.v2.Group", resourceName: req.uid } },
      // Not in the transcoder's registry: must be skipped, not crash.
      { desc: GroupSchema, value: { uid: "unlisted" } },
    ]);
  },
  listGroups(req) {
    lastList = req;
    let list = [...groups.values()];
    if (req.uidp?.childrenOf) list = list.filter((g) => g.uid.startsWith(req.uidp!.childrenOf + "/"));
    if (req.uidp?.ids.length) list = list.filter((g) => req.uidp!.ids.includes(g.uid));
    return { groups: list.slice(0, req.pageSize || 50), totalCount: BigInt(list.length), nextPageToken: "" };
  },
  createGroup(req) {
    lastCreate = { parent: req.parent, group: req.group };
    const uid = req.parent ? `${req.parent}/${"c".repeat(16)}` : "d".repeat(40);
    const createTime = timestampFromDate(new Date("2024-05-01T10:20:30.123Z"));
    const g = create(GroupSchema, { name: req.group?.name, description: req.group?.description, uid, createTime });
    groups.set(uid, g);
    return g;
  },
  updateGroup(req) {
    lastUpdate = req;
    const g = groups.get(req.group!.uid)!;
    for (const path of req.updateMask!.paths) {
      if (path === "name") g.name = req.group!.name;
      if (path === "description") g.description = req.group!.description;
    }
    return g;
  },
  deleteGroup(req) {
    groups.delete(req.uid);
    return {};
  },
};

// Records every call and refuses calls without a credential (except Ping): proves REST goes
// through the router's interceptors.
const calls: Call[] = [];
const recorder: Interceptor = (next) => async (req) => {
  calls.push({
    rpc: req.method.name,
    protocol: req.contextValues.get(protocolKey),
    authorization: req.header.get("authorization"),
    requestId: req.header.get("x-request-id"),
    message: req.message,
  });
  if (req.method.name !== "Ping" && !req.header.get("authorization")) {
    throw new ConnectError("Missing credential", Code.Unauthenticated, { "www-authenticate": "Bearer" }, [
      { desc: ErrorInfoSchema, value: { reason: "UNAUTHENTICATED", domain: "platform-api" } },
    ]);
  }
  return next(req);
};

function buildNodeHandler(): ReturnType<typeof connectNodeAdapter> {
  // The wiring recommended in src/transport/rest/transcoder.ts: one router for RPC and REST.
  const services: RecordedService[] = [];
  const nodeHandler = connectNodeAdapter({
    interceptors: [recorder],
    routes: (router) => {
      const r = recordingRouter(router, services);
      r.service(GroupsService, groupsImpl);
      r.service(PingService, { ping: () => ({ response: "pong" }) });
    },
    fallback: (req, res) => {
      void rest(req, res).then((answered) => {
        if (!answered) {
          res.writeHead(404, { "content-type": "text/plain" });
          res.end("no route");
        }
      });
    },
  });
  const rest: RestHandler = createRestTranscoder({
    services: [GroupsService, PingService],
    call: createUnaryCaller(services, [recorder], "rest"),
    registry: createRegistry(file_google_rpc_error_details),
    maxBodyBytes: MAX_BODY,
    errorDomain: "platform-api",
    contextValues: () => createContextValues(),
  });
  return nodeHandler;
}

let server: http.Server;
let base: string;
const auth = { authorization: "Bearer token-1" };

async function call(method: string, path: string, body?: unknown, headers: Record<string, string> = auth) {
  const res = await fetch(base + path, {
    method,
    headers: { ...headers, ...(body !== undefined ? { "content-type": "application/json" } : {}) },
    body: body === undefined ? undefined : typeof body === "string" ? body : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, headers: res.headers, text, json: text ? (JSON.parse(text) as Record<string, unknown>) : undefined };
}

function seed(): void {
  groups.clear();
  groups.set(ORG, create(GroupSchema, { uid: ORG, name: "acme", description: "org" }));
  groups.set(FOLDER, create(GroupSchema, { uid: FOLDER, name: "team", description: "folder", createTime: timestampFromDate(new Date("2024-01-02T03:04:05.006Z")) }));
  groups.set(`${ORG}/${"e".repeat(16)}`, create(GroupSchema, { uid: `${ORG}/${"e".repeat(16)}`, name: "other" }));
}

describe("REST transcoder over a real router and HTTP/1.1 server", () => {
  before(async () => {
    server = http.createServer(buildNodeHandler());
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(() => new Promise<void>((resolve) => server.close(() => resolve())));
  beforeEach(() => {
    seed();
    calls.length = 0;
  });

  it("GET by a uid containing / runs the interceptors with protocol rest and forwarded headers", async () => {
    const r = await call("GET", `/iam/v2/groups/${FOLDER}`, undefined, { ...auth, "x-request-id": "req-42" });
    assert.equal(r.status, 200);
    assert.match(r.headers.get("content-type") ?? "", /^application\/json/);
    assert.deepEqual(r.json, { uid: FOLDER, name: "team", description: "folder", createTime: "2024-01-02T03:04:05.006Z" });
    assert.deepEqual(calls.map((c) => [c.rpc, c.protocol, c.authorization, c.requestId]), [["GetGroup", "rest", "Bearer token-1", "req-42"]]);
  });

  it("List maps page_size, uidp.children_of and repeated uidp.ids; optional int64 is written", async () => {
    const other = `${ORG}/${"e".repeat(16)}`;
    const r = await call("GET", `/iam/v2/groups?page_size=1&uidp.children_of=${ORG}&uidp.ids=${FOLDER}&uidp.ids=${other}&orderBy=name`);
    assert.equal(r.status, 200);
    assert.equal(lastList?.pageSize, 1);
    assert.equal(lastList?.orderBy, "name");
    assert.equal(lastList?.uidp?.childrenOf, ORG);
    assert.deepEqual(lastList?.uidp?.ids, [FOLDER, other]);
    assert.equal(r.json?.totalCount, "2");
    assert.equal((r.json?.groups as unknown[]).length, 1);
  });

  it("List with zero results writes the whole envelope, zero values included", async () => {
    const r = await call("GET", `/iam/v2/groups?uidp.ids=none`);
    assert.deepEqual(r.json, { groups: [], nextPageToken: "", totalCount: "0", skipped: 0 });
  });

  it("POST with body group, without and with a parent", async () => {
    const org = await call("POST", "/iam/v2/groups", { name: "neworg", description: "d" });
    assert.equal(org.status, 200);
    assert.deepEqual(lastCreate, { parent: "", group: create(GroupSchema, { name: "neworg", description: "d" }) });
    assert.equal(org.json?.uid, "d".repeat(40));
    assert.equal(org.json?.createTime, "2024-05-01T10:20:30.123Z");

    const folder = await call("POST", `/iam/v2/groups/${FOLDER}`, { name: "sub" });
    assert.equal(folder.status, 200);
    assert.equal(lastCreate?.parent, FOLDER);
    assert.equal(lastCreate?.group?.name, "sub");
    assert.equal(folder.json?.uid, `${FOLDER}/${"c".repeat(16)}`);
  });

  it("an answer holding characters beyond ASCII declares its length in bytes, not characters", async () => {
    const description = "café ✓ 日本";
    await call("POST", "/iam/v2/groups", { name: "utf8", description });
    const r = await call("GET", `/iam/v2/groups/${"d".repeat(40)}`);
    assert.equal(r.status, 200);
    assert.equal(r.json?.description, description);
    assert.equal(r.headers.get("content-length"), String(Buffer.byteLength(r.text, "utf8")));
    assert.notEqual(Buffer.byteLength(r.text, "utf8"), r.text.length);
  });

  it("POST with an empty body sends an empty group", async () => {
    const r = await call("POST", "/iam/v2/groups", "");
    assert.equal(r.status, 200);
    assert.equal(lastCreate?.group?.name, "");
  });

  it("PATCH without updateMask infers the mask from the body keys (empty string clears)", async () => {
    const r = await call("PATCH", `/iam/v2/groups/${FOLDER}`, { description: "" });
    assert.equal(r.status, 200);
    assert.deepEqual(lastUpdate?.updateMask?.paths, ["description"]);
    assert.equal(lastUpdate?.group?.uid, FOLDER);
    assert.deepEqual(r.json, { uid: FOLDER, name: "team", description: "", createTime: "2024-01-02T03:04:05.006Z" });
  });

  it("PATCH infers only writable fields; a body uid must agree with the path's", async () => {
    const r = await call("PATCH", `/iam/v2/groups/${FOLDER}`, { uid: FOLDER, name: "renamed", createTime: "2020-01-01T00:00:00Z" });
    assert.equal(r.status, 200);
    assert.deepEqual(lastUpdate?.updateMask?.paths, ["name"]);
    assert.equal(lastUpdate?.group?.uid, FOLDER);
    assert.equal(r.json?.name, "renamed");

    const other = await call("PATCH", `/iam/v2/groups/${FOLDER}`, { uid: ORG, name: "renamed again" });
    assert.equal(other.status, 400);
    const violations = (other.json?.details as { fieldViolations?: { field: string; description: string }[] }[])[1].fieldViolations;
    assert.equal(violations?.[0].field, "group.uid");
    assert.match(violations?.[0].description ?? "", /the body says .* but the URL says/);
    assert.equal(r.json?.name, "renamed");
  });

  it("PATCH with {} sends an empty (present) mask", async () => {
    const r = await call("PATCH", `/iam/v2/groups/${FOLDER}`, {});
    assert.equal(r.status, 200);
    assert.ok(lastUpdate?.updateMask);
    assert.deepEqual(lastUpdate.updateMask.paths, []);
  });

  it("PATCH with updateMask uses the given mask only", async () => {
    const r = await call("PATCH", `/iam/v2/groups/${FOLDER}?updateMask=description`, { name: "ignored", description: "new" });
    assert.equal(r.status, 200);
    assert.deepEqual(lastUpdate?.updateMask?.paths, ["description"]);
    assert.deepEqual([r.json?.name, r.json?.description], ["team", "new"]);
  });

  it("PATCH with an empty updateMask infers the mask", async () => {
    const r = await call("PATCH", `/iam/v2/groups/${FOLDER}?updateMask=`, { name: "renamed" });
    assert.equal(r.status, 200);
    assert.deepEqual(lastUpdate?.updateMask?.paths, ["name"]);
  });

  it("DELETE answers 200 with an empty body", async () => {
    const r = await call("DELETE", `/iam/v2/groups/${FOLDER}`);
    assert.equal(r.status, 200);
    assert.equal(r.text, "");
    assert.equal(groups.has(FOLDER), false);
  });

  it("a handler error becomes a Status JSON with typed details; unknown detail types are skipped", async () => {
    const r = await call("GET", `/iam/v2/groups/${ORG}/${"f".repeat(16)}`);
    assert.equal(r.status, 404);
    assert.match(r.headers.get("content-type") ?? "", /^application\/json/);
    assert.deepEqual(r.json, {
      code: 5,
      message: `Group ${ORG}/${"f".repeat(16)} not found`,
      details: [
        { "@type": "type.googleapis.com/google.rpc.ErrorInfo", reason: "NOT_FOUND", domain: "platform-api" },
        { "@type": "type.googleapis.com/google.rpc.ResourceInfo", resourceType: "platform.iam.v2.Group", resourceName: `${ORG}/${"f".repeat(16)}` },
      ],
    });
  });

  it("an interceptor refusal is 401 with its ErrorInfo and metadata headers", async () => {
    const r = await call("GET", `/iam/v2/groups/${ORG}`, undefined, {});
    assert.equal(r.status, 401);
    assert.equal(r.headers.get("www-authenticate"), "Bearer");
    assert.deepEqual(r.json, {
      code: 16,
      message: "Missing credential",
      details: [{ "@type": "type.googleapis.com/google.rpc.ErrorInfo", reason: "UNAUTHENTICATED", domain: "platform-api" }],
    });
  });

  it("serves /iam/v2beta1/ as an alias of /iam/v2/", async () => {
    const r = await call("GET", `/iam/v2beta1/groups/${ORG}`);
    assert.equal(r.status, 200);
    assert.equal(r.json?.name, "acme");
  });

  it("Ping needs no credential", async () => {
    const r = await call("GET", "/ping/v2/ping", undefined, {});
    assert.deepEqual([r.status, r.json], [200, { response: "pong" }]);
  });

  it("a body over maxBodyBytes is 413 RESOURCE_EXHAUSTED and the handler is not called", async () => {
    const r = await call("POST", "/iam/v2/groups", { name: "x", description: "y".repeat(MAX_BODY * 4) });
    assert.equal(r.status, 413);
    assert.equal(r.json?.code, 8);
    assert.deepEqual(r.json?.details, [{ "@type": "type.googleapis.com/google.rpc.ErrorInfo", reason: "REQUEST_TOO_LARGE", domain: "platform-api" }]);
    assert.equal(calls.length, 0);
  });

  it("a body over maxBodyBytes without Content-Length (chunked) is 413 too", async () => {
    const port = (server.address() as AddressInfo).port;
    const status = await new Promise<number>((resolve, reject) => {
      const req = http.request({ port, host: "127.0.0.1", method: "POST", path: "/iam/v2/groups", headers: { ...auth, "transfer-encoding": "chunked" } }, (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      });
      req.on("error", reject);
      req.write('{"name": "');
      req.write("z".repeat(MAX_BODY * 2));
      req.end('"}');
    });
    assert.equal(status, 413);
    assert.equal(calls.length, 0);
  });

  it("a bad query parameter is 400 with BadRequest and ErrorInfo", async () => {
    const r = await call("GET", "/iam/v2/groups?page_size=ten&colour=red&order_by.x=1");
    assert.equal(r.status, 400);
    assert.equal(r.json?.code, 3);
    assert.deepEqual(r.json?.details, [
      { "@type": "type.googleapis.com/google.rpc.ErrorInfo", reason: "INVALID_ARGUMENT", domain: "platform-api" },
      {
        "@type": "type.googleapis.com/google.rpc.BadRequest",
        fieldViolations: [
          { field: "page_size", description: 'invalid int32: "ten"' },
          { field: "colour", description: 'Unknown name "colour": platform.iam.v2.ListGroupsRequest has no such field' },
          { field: "order_by.x", description: "not a message field, cannot select a sub-field" },
        ],
      },
    ]);
    assert.equal(calls.length, 0);
  });

  it("malformed JSON, a duplicate key, a mistyped known field or a key naming no field is 400 naming it", async () => {
    const fieldsOf = (r: { json?: Record<string, unknown> }) =>
      (r.json?.details as { fieldViolations?: { field: string; description: string }[] }[])[1].fieldViolations ?? [];
    const malformed = await call("POST", "/iam/v2/groups", "{not json");
    assert.equal(malformed.status, 400);
    assert.equal(fieldsOf(malformed)[0].field, "group");

    const twice = await call("POST", "/iam/v2/groups", '{"name": "x", "description": "a", "description": "b"}');
    assert.equal(twice.status, 400);
    assert.match(fieldsOf(twice)[0].description, /"description" appears more than once/);

    const mistyped = await call("POST", "/iam/v2/groups", { name: "x", description: 5 });
    assert.equal(mistyped.status, 400);
    assert.deepEqual(fieldsOf(mistyped).map((v) => v.field), ["group.description"]);

    const unknown = await call("POST", "/iam/v2/groups", { name: "x", colour: "red", owner: { team: "a" } });
    assert.equal(unknown.status, 400, unknown.text);
    assert.deepEqual(fieldsOf(unknown), [
      { field: "group.colour", description: 'Unknown name "colour": platform.iam.v2.Group has no such field' },
      { field: "group.owner", description: 'Unknown name "owner": platform.iam.v2.Group has no such field' },
    ]);
    assert.equal(calls.length, 0);
  });

  it("a body that is not declared JSON is 415; an empty one needs no type", async () => {
    for (const type of ["text/plain", "application/x-www-form-urlencoded", undefined]) {
      const res = await fetch(base + "/iam/v2/groups", { method: "POST", headers: { ...auth, ...(type ? { "content-type": type } : {}) }, body: new TextEncoder().encode('{"name": "x"}') });
      assert.equal(res.status, 415, String(type));
      const status = (await res.json()) as { code: number; details: { reason?: string }[] };
      assert.equal(status.code, 3);
      assert.equal(status.details[0].reason, "UNSUPPORTED_MEDIA_TYPE");
    }
    for (const type of ["application/json; charset=utf-8", "application/vnd.example+json", "Application/JSON"]) {
      const res = await fetch(base + "/iam/v2/groups", { method: "POST", headers: { ...auth, "content-type": type }, body: '{"name": "y"}' });
      assert.equal(res.status, 200, type);
    }
    const empty = await fetch(base + "/iam/v2/groups", { method: "POST", headers: auth });
    assert.equal(empty.status, 200);
    assert.equal(calls.length, 4);
  });

  it("a known path with another method is 405 UNIMPLEMENTED with Allow", async () => {
    const r = await call("PUT", `/iam/v2/groups/${ORG}`, {});
    assert.equal(r.status, 405);
    assert.equal(r.headers.get("allow"), "DELETE, GET, PATCH, POST");
    assert.equal(r.json?.code, 12);
  });

  it("an unknown path falls through to the caller (resolves false)", async () => {
    const r = await fetch(base + "/nothing/v2/here");
    assert.equal(r.status, 404);
    assert.equal(await r.text(), "no route");
  });

  it("the same router still serves the Connect protocol", async () => {
    const r = await fetch(base + "/platform.iam.v2.GroupsService/GetGroup", {
      method: "POST",
      headers: { ...auth, "content-type": "application/json" },
      body: JSON.stringify({ uid: ORG }),
    });
    assert.equal(r.status, 200);
    assert.equal(((await r.json()) as { name: string }).name, "acme");
    assert.deepEqual(calls.map((c) => [c.rpc, c.protocol]), [["GetGroup", "in-process"]]);
  });
});

describe("REST transcoder over HTTP/2 (compat API)", () => {
  let h2server: http2.Http2Server;
  let client: http2.ClientHttp2Session;
  before(async () => {
    seed();
    h2server = http2.createServer(buildNodeHandler());
    await new Promise<void>((resolve) => h2server.listen(0, "127.0.0.1", resolve));
    client = http2.connect(`http://127.0.0.1:${(h2server.address() as AddressInfo).port}`);
  });
  after(async () => {
    client.close();
    await new Promise<void>((resolve) => h2server.close(() => resolve()));
  });

  function h2call(method: string, path: string, body?: string): Promise<{ status: number; text: string }> {
    return new Promise((resolve, reject) => {
      const stream = client.request({ ":method": method, ":path": path, ...auth, "content-type": "application/json" });
      let status = 0;
      let text = "";
      stream.setEncoding("utf8");
      stream.on("response", (h) => (status = Number(h[":status"])));
      stream.on("data", (d: string) => (text += d));
      stream.on("end", () => resolve({ status, text }));
      stream.on("error", reject);
      stream.end(body);
    });
  }

  it("GET and POST work", async () => {
    const got = await h2call("GET", `/iam/v2/groups/${FOLDER}`);
    assert.equal(got.status, 200);
    assert.equal((JSON.parse(got.text) as { name: string }).name, "team");
    const created = await h2call("POST", `/iam/v2/groups/${ORG}`, JSON.stringify({ name: "h2" }));
    assert.equal(created.status, 200);
    assert.equal((JSON.parse(created.text) as { name: string }).name, "h2");
    const deleted = await h2call("DELETE", `/iam/v2/groups/${FOLDER}`);
    assert.deepEqual(deleted, { status: 200, text: "" });
  });

  it("a client resetting its stream aborts the call with CANCELED", async () => {
    slowStarted = false;
    slowAborted = undefined;
    const stream = client.request({ ":method": "GET", ":path": `/iam/v2/groups/${SLOW}`, ...auth });
    stream.on("error", () => {});
    stream.end();
    await until(() => slowStarted, "the call started");
    stream.close(http2.constants.NGHTTP2_CANCEL);
    await until(() => slowAborted !== undefined, "the handler's signal was aborted");
    assert.equal((slowAborted as ConnectError).code, Code.Canceled);
  });
});

describe("REST transcoder: a client leaving over HTTP/1.1", () => {
  before(async () => {
    seed();
    server = http.createServer(buildNodeHandler());
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  });
  after(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it("a client closing its connection aborts the call with CANCELED", async () => {
    slowStarted = false;
    slowAborted = undefined;
    const req = http.request({ host: "127.0.0.1", port: (server.address() as AddressInfo).port, path: `/iam/v2/groups/${SLOW}`, headers: auth, agent: false });
    req.on("error", () => {});
    req.end();
    await until(() => slowStarted, "the call started");
    req.destroy();
    await until(() => slowAborted !== undefined, "the handler's signal was aborted");
    assert.equal((slowAborted as ConnectError).code, Code.Canceled);
  });
});

/** Waits (at most 2 s) for `done`. */
async function until(done: () => boolean, what: string): Promise<void> {
  for (const end = Date.now() + 2_000; !done(); await new Promise((resolve) => setTimeout(resolve, 5))) {
    if (Date.now() > end) assert.fail(`not within 2 s: ${what}`);
  }
}
