import assert from "node:assert/strict";
import http2 from "node:http2";
import { gzipSync } from "node:zlib";
import { after, before, describe, test } from "node:test";
import { create, fromBinary, toBinary, toJsonString } from "@bufbuild/protobuf";
import { AnySchema, anyUnpack, type Any } from "@bufbuild/protobuf/wkt";
import { ErrorInfoSchema, type ErrorInfo } from "../../gen/google/rpc/error_details_pb.js";
import { StatusSchema } from "../../gen/google/rpc/status_pb.js";
import { HealthCheckRequestSchema } from "../../gen/grpc/health/v1/health_pb.js";
import { GetGroupRequestSchema } from "../../gen/platform/iam/v2/groups_service_pb.js";
import { startTestServer, type TestServer } from "../support/test-server.js";
import { detailRegistry } from "../support/wires.js";

/**
 * Errors connect-es raises itself, before any interceptor runs (framing, decompression,
 * size limit, bad protocol headers, request cardinality), follow the API's error rules
 * on every wire: a caller fault is never INTERNAL, and every error carries exactly one
 * ErrorInfo (reason = the code's UPPER_SNAKE name, domain = the server's error domain).
 * One case per kind per wire: gRPC (trailers), gRPC-Web (trailer frame), Connect unary
 * (JSON error body, POST and GET) and Connect streaming (end-of-stream message).
 * Undecodable protobuf has its own file, malformed-protobuf.test.ts.
 */
const DOMAIN = "errors.example.test";
const MAX_BODY = 4096;
const GET_GROUP = "/platform.iam.v2.GroupsService/GetGroup";
const WATCH = "/grpc.health.v1.Health/Watch";

let server: TestServer;
let session: http2.ClientHttp2Session;
let valid: Uint8Array;

before(async () => {
  server = await startTestServer({ logLevel: "silent", errorDomain: DOMAIN, limits: { maxBodyBytes: MAX_BODY } });
  session = http2.connect(server.apiUrl);
  valid = toBinary(GetGroupRequestSchema, create(GetGroupRequestSchema, { uid: server.org.uid }));
});

after(async () => {
  session.close();
  await server.close();
});

// ---- bodies ----

const frame = (payload: Uint8Array, flags = 0, length = payload.length) => {
  const out = Buffer.alloc(5 + payload.length);
  out[0] = flags;
  out.writeUInt32BE(length, 1);
  out.set(payload, 5);
  return out;
};
const concat = (...parts: Uint8Array[]) => new Uint8Array(Buffer.concat(parts));

// ---- what an answer says ----

interface Status {
  /** The gRPC code as a number (Connect's code string mapped by the caller). */
  code: number | string;
  message: string;
  infos: ErrorInfo[];
}

function infosOf(details: Any[]): ErrorInfo[] {
  return details.map((d) => anyUnpack(d, detailRegistry)).filter((m): m is ErrorInfo => m?.$typeName === ErrorInfoSchema.typeName);
}

function statusOfHeaders(get: (name: string) => string | undefined): Status {
  const bin = get("grpc-status-details-bin");
  return {
    code: Number(get("grpc-status")),
    message: decodeURIComponent(get("grpc-message") ?? ""),
    infos: bin ? infosOf(fromBinary(StatusSchema, Buffer.from(bin, "base64")).details) : [],
  };
}

function statusOfConnectJson(error: { code?: string; message?: string; details?: Array<{ type: string; value: string }> }): Status {
  const details = (error.details ?? []).map((d) => create(AnySchema, { typeUrl: `type.googleapis.com/${d.type}`, value: Buffer.from(d.value, "base64") }));
  return { code: String(error.code), message: error.message ?? "", infos: infosOf(details) };
}

/** A raw gRPC call over h2c; the status from the trailers (or a trailers-only answer), and the messages received. */
function grpcCall(path: string, body: Uint8Array, headers: Record<string, string> = {}): Promise<Status & { frames: number }> {
  return new Promise((resolve, reject) => {
    const stream = session.request({ ":method": "POST", ":path": path, "content-type": "application/grpc", te: "trailers", authorization: `Bearer ${server.ownerToken}`, ...headers });
    let meta: http2.IncomingHttpHeaders = {};
    const chunks: Buffer[] = [];
    stream.on("response", (h) => (meta = h));
    stream.on("trailers", (t) => (meta = { ...meta, ...t }));
    stream.on("data", (chunk: Buffer) => chunks.push(chunk));
    stream.on("error", reject);
    stream.on("close", () => resolve({ ...statusOfHeaders((name) => meta[name] as string | undefined), frames: countFrames(Buffer.concat(chunks)).messages }));
    stream.end(body);
  });
}

function countFrames(bytes: Buffer): { messages: number; trailer?: Buffer; trailerFlags?: number } {
  const out: { messages: number; trailer?: Buffer; trailerFlags?: number } = { messages: 0 };
  for (let at = 0; at + 5 <= bytes.length; at += 5 + bytes.readUInt32BE(at + 1)) {
    const data = bytes.subarray(at + 5, at + 5 + bytes.readUInt32BE(at + 1));
    if ((bytes[at] & 0x80) === 0x80 || (bytes[at] & 0x02) === 0x02) {
      out.trailer = data;
      out.trailerFlags = bytes[at];
    } else out.messages++;
  }
  return out;
}

/** gRPC-Web over HTTP/1.1; the status from the trailer frame. */
async function grpcWebCall(path: string, body: Uint8Array, headers: Record<string, string> = {}): Promise<Status & { frames: number; trailerFlags?: number }> {
  const res = await fetch(`${server.apiUrl}${path}`, {
    method: "POST",
    headers: { "content-type": "application/grpc-web+proto", "x-grpc-web": "1", authorization: `Bearer ${server.ownerToken}`, ...headers },
    body: new Uint8Array(body),
  });
  const { messages, trailer, trailerFlags } = countFrames(Buffer.from(await res.arrayBuffer()));
  const fields = new Map<string, string>();
  for (const line of (trailer ?? Buffer.alloc(0)).toString("utf8").split("\r\n")) {
    const i = line.indexOf(":");
    if (i > 0) fields.set(line.slice(0, i).trim().toLowerCase(), line.slice(i + 1).trim());
  }
  return { ...statusOfHeaders((name) => fields.get(name) ?? res.headers.get(name) ?? undefined), frames: messages, trailerFlags };
}

/** Connect unary; the error from the JSON body. */
async function connectCall(init: { path?: string; query?: string; method?: string; body?: Uint8Array; headers?: Record<string, string> }): Promise<Status & { http: number }> {
  const res = await fetch(`${server.apiUrl}${init.path ?? GET_GROUP}${init.query ?? ""}`, {
    method: init.method ?? "POST",
    headers: { "content-type": "application/proto", authorization: `Bearer ${server.ownerToken}`, ...init.headers },
    body: init.body ? new Uint8Array(init.body) : undefined,
  });
  const text = await res.text();
  if (res.status === 200) return { http: 200, code: "ok", message: "", infos: [] };
  return { http: res.status, ...statusOfConnectJson(JSON.parse(text) as Parameters<typeof statusOfConnectJson>[0]) };
}

/** Connect streaming (application/connect+json); the error from the end-of-stream message. */
async function connectStreamCall(path: string, body: Uint8Array, headers: Record<string, string> = {}): Promise<Status & { http: number; frames: number }> {
  const res = await fetch(`${server.apiUrl}${path}`, {
    method: "POST",
    headers: { "content-type": "application/connect+json", authorization: `Bearer ${server.ownerToken}`, ...headers },
    body: new Uint8Array(body),
  });
  const { messages, trailer } = countFrames(Buffer.from(await res.arrayBuffer()));
  const end = JSON.parse((trailer ?? Buffer.from("{}")).toString("utf8")) as { error?: Parameters<typeof statusOfConnectJson>[0] };
  return { http: res.status, frames: messages, ...(end.error ? statusOfConnectJson(end.error) : { code: "ok", message: "", infos: [] }) };
}

function assertErrorInfo(status: Status, reason: string): void {
  assert.equal(status.infos.length, 1, `exactly one ErrorInfo in ${JSON.stringify(status)}`);
  assert.equal(status.infos[0].reason, reason);
  assert.equal(status.infos[0].domain, DOMAIN);
}

// ---- gRPC and gRPC-Web: framing ----

interface FramedCase {
  name: string;
  body: () => Uint8Array;
  headers?: Record<string, string>;
  code: number;
  reason: string;
  message: RegExp;
}

const FRAMED: FramedCase[] = [
  { name: "a body shorter than a frame header", body: () => new Uint8Array([0, 0, 0]), code: 3, reason: "INVALID_ARGUMENT", message: /incomplete envelope/ },
  { name: "a frame holding fewer bytes than it promises", body: () => frame(valid, 0, valid.length + 50), code: 3, reason: "INVALID_ARGUMENT", message: /incomplete envelope/ },
  { name: "no request message", body: () => new Uint8Array(0), code: 12, reason: "UNIMPLEMENTED", message: /missing input message for unary method/ },
  { name: "two request messages", body: () => concat(frame(valid), frame(valid)), code: 12, reason: "UNIMPLEMENTED", message: /extra input message for unary method/ },
  { name: "a frame longer than the body limit", body: () => frame(valid, 0, MAX_BODY + 1), code: 8, reason: "RESOURCE_EXHAUSTED", message: /larger than configured readMaxBytes/ },
  {
    name: "a frame flagged compressed without grpc-encoding",
    body: () => frame(valid, 1),
    code: 3,
    reason: "INVALID_ARGUMENT",
    message: /^Invalid argument: a request message is flagged compressed, but the request names no compression/,
  },
  {
    name: "a gzip frame that does not inflate",
    body: () => frame(new Uint8Array([0x1f, 0x8b, 0x08, 0x00, 0x01, 0x02]), 1),
    headers: { "grpc-encoding": "gzip" },
    code: 3,
    reason: "INVALID_ARGUMENT",
    message: /decompress/,
  },
  { name: "an unknown grpc-encoding", body: () => frame(valid, 1), headers: { "grpc-encoding": "zstd" }, code: 12, reason: "UNIMPLEMENTED", message: /unknown compression "zstd"/ },
  { name: "a malformed grpc-timeout", body: () => frame(valid), headers: { "grpc-timeout": "soon" }, code: 3, reason: "INVALID_ARGUMENT", message: /invalid grpc timeout value/ },
];

describe("framework errors over gRPC", () => {
  test("a well-formed call still succeeds, untouched", async () => {
    const out = await grpcCall(GET_GROUP, frame(valid));
    assert.equal(out.code, 0, out.message);
    assert.equal(out.frames, 1);
    assert.deepEqual(out.infos, []);
  });
  for (const c of FRAMED) {
    test(`${c.name}: code ${c.code} with an ErrorInfo ${c.reason}`, async () => {
      const out = await grpcCall(GET_GROUP, c.body(), c.headers);
      assert.equal(out.code, c.code, out.message);
      assert.match(out.message, c.message);
      assertErrorInfo(out, c.reason);
    });
  }
});

describe("framework errors over gRPC-Web", () => {
  test("a well-formed call still succeeds, untouched", async () => {
    const out = await grpcWebCall(GET_GROUP, frame(valid));
    assert.equal(out.code, 0, out.message);
    assert.equal(out.frames, 1);
    assert.deepEqual(out.infos, []);
  });
  for (const c of FRAMED) {
    test(`${c.name}: code ${c.code} with an ErrorInfo ${c.reason}`, async () => {
      const out = await grpcWebCall(GET_GROUP, c.body(), c.headers);
      assert.equal(out.code, c.code, out.message);
      assert.match(out.message, c.message);
      assertErrorInfo(out, c.reason);
    });
  }
  test("a trailer the client accepts compressed is rewritten uncompressed", async () => {
    // connect-es echoes the bad timeout, which makes its trailer longer than its 1 KiB compression threshold.
    const out = await grpcWebCall(GET_GROUP, frame(valid), { "grpc-accept-encoding": "gzip", "grpc-timeout": "9".repeat(1200) });
    assert.equal(out.code, 3, out.message);
    assertErrorInfo(out, "INVALID_ARGUMENT");
    assert.equal(out.trailerFlags, 0x80);
  });
});

// ---- Connect unary ----

describe("framework errors over Connect unary", () => {
  test("a well-formed call still succeeds, untouched", async () => {
    assert.equal((await connectCall({ body: valid })).http, 200);
  });
  test("JSON that does not decode: HTTP 400 invalid_argument with an ErrorInfo", async () => {
    const out = await connectCall({ body: new TextEncoder().encode('{"uid": 5}'), headers: { "content-type": "application/json" } });
    assert.equal(out.http, 400);
    assert.equal(out.code, "invalid_argument");
    assert.match(out.message, /cannot decode/);
    assertErrorInfo(out, "INVALID_ARGUMENT");
  });
  test("a body over the body limit: HTTP 429 resource_exhausted with an ErrorInfo", async () => {
    const out = await connectCall({ body: new Uint8Array(MAX_BODY + 1) });
    assert.equal(out.http, 429);
    assert.equal(out.code, "resource_exhausted");
    assertErrorInfo(out, "RESOURCE_EXHAUSTED");
  });
  test("gzip that does not inflate: HTTP 400 invalid_argument with an ErrorInfo", async () => {
    const out = await connectCall({ body: new Uint8Array([0x1f, 0x8b, 0x08, 0x00, 0x01, 0x02]), headers: { "content-encoding": "gzip" } });
    assert.equal(out.http, 400);
    assert.equal(out.code, "invalid_argument");
    assertErrorInfo(out, "INVALID_ARGUMENT");
  });
  test("an unknown content-encoding: unimplemented (the Connect protocol's answer) with an ErrorInfo", async () => {
    const out = await connectCall({ body: gzipSync(valid), headers: { "content-encoding": "zstd" } });
    assert.equal(out.code, "unimplemented");
    assert.match(out.message, /unknown compression "zstd"/);
    assertErrorInfo(out, "UNIMPLEMENTED");
  });
  test("a malformed connect-timeout-ms: HTTP 400 invalid_argument with an ErrorInfo", async () => {
    const out = await connectCall({ body: valid, headers: { "connect-timeout-ms": "soon" } });
    assert.equal(out.http, 400);
    assert.equal(out.code, "invalid_argument");
    assertErrorInfo(out, "INVALID_ARGUMENT");
  });
  test("an error body the client accepts compressed is rewritten uncompressed", async () => {
    const res = await fetch(`${server.apiUrl}${GET_GROUP}`, {
      method: "POST",
      headers: { "content-type": "application/proto", "accept-encoding": "gzip", "connect-timeout-ms": "9".repeat(1200), authorization: `Bearer ${server.ownerToken}` },
      body: new Uint8Array(valid),
    });
    assert.equal(res.status, 400);
    assert.equal(res.headers.get("content-encoding"), null);
    const out = statusOfConnectJson((await res.json()) as Parameters<typeof statusOfConnectJson>[0]);
    assertErrorInfo(out, "INVALID_ARGUMENT");
  });
});

describe("framework errors over Connect GET", () => {
  const get = (params: Record<string, string>) => connectCall({ method: "GET", query: `?${new URLSearchParams({ connect: "v1", ...params }).toString()}` });
  test("a well-formed GET still succeeds", async () => {
    const message = toJsonString(GetGroupRequestSchema, create(GetGroupRequestSchema, { uid: server.org.uid }));
    assert.equal((await get({ encoding: "json", message })).http, 200);
  });
  test("a JSON message that does not decode: HTTP 400 invalid_argument with an ErrorInfo", async () => {
    const out = await get({ encoding: "json", message: '{"uid": 5}' });
    assert.equal(out.http, 400);
    assertErrorInfo(out, "INVALID_ARGUMENT");
  });
  test("a binary message that does not decode: HTTP 400 invalid_argument with an ErrorInfo", async () => {
    const out = await get({ encoding: "proto", base64: "1", message: Buffer.from([0x0a, 0x80]).toString("base64url") });
    assert.equal(out.http, 400);
    assert.match(out.message, /^Invalid argument: the request is not a valid platform\.iam\.v2\.GetGroupRequest message/);
    assertErrorInfo(out, "INVALID_ARGUMENT");
  });
});

// ---- streaming: health Watch over the three streaming wires ----

describe("framework errors on a streaming call (health Watch)", () => {
  const request = toBinary(HealthCheckRequestSchema, create(HealthCheckRequestSchema, { service: "" }));
  const json = new TextEncoder().encode(toJsonString(HealthCheckRequestSchema, create(HealthCheckRequestSchema, { service: "" })));

  test("over gRPC: the first status arrives, and the deadline ends the stream with an ErrorInfo", async () => {
    const out = await grpcCall(WATCH, frame(request), { "grpc-timeout": "300m" });
    assert.equal(out.frames, 1);
    assert.equal(out.code, 4, out.message);
    assertErrorInfo(out, "DEADLINE_EXCEEDED");
  });
  test("over gRPC: a broken frame ends the stream with an ErrorInfo", async () => {
    const out = await grpcCall(WATCH, new Uint8Array([0, 0]));
    assert.equal(out.code, 3, out.message);
    assertErrorInfo(out, "INVALID_ARGUMENT");
  });
  test("over gRPC: a request that is not valid protobuf is INVALID_ARGUMENT naming its type, with an ErrorInfo", async () => {
    const out = await grpcCall(WATCH, frame(new Uint8Array([0x0a, 0x80])));
    assert.equal(out.code, 3, out.message);
    assert.match(out.message, /^Invalid argument: the request is not a valid grpc\.health\.v1\.HealthCheckRequest message/);
    assertErrorInfo(out, "INVALID_ARGUMENT");
  });
  test("over gRPC: a frame flagged compressed without grpc-encoding is INVALID_ARGUMENT with an ErrorInfo", async () => {
    const out = await grpcCall(WATCH, frame(request, 1));
    assert.equal(out.code, 3, out.message);
    assertErrorInfo(out, "INVALID_ARGUMENT");
  });
  test("over gRPC-Web: the first status arrives, and the deadline ends the stream with an ErrorInfo", async () => {
    const out = await grpcWebCall(WATCH, frame(request), { "grpc-timeout": "300m" });
    assert.equal(out.frames, 1);
    assert.equal(out.code, 4, out.message);
    assertErrorInfo(out, "DEADLINE_EXCEEDED");
  });
  test("over Connect streaming: the first status arrives, and the deadline ends the stream with an ErrorInfo", async () => {
    const out = await connectStreamCall(WATCH, frame(json), { "connect-timeout-ms": "300" });
    assert.equal(out.http, 200);
    assert.equal(out.frames, 1);
    assert.equal(out.code, "deadline_exceeded", out.message);
    assertErrorInfo(out, "DEADLINE_EXCEEDED");
  });
  test("over Connect streaming: a frame flagged compressed without an encoding ends the stream INVALID_ARGUMENT with an ErrorInfo", async () => {
    const out = await connectStreamCall(WATCH, frame(json, 1));
    assert.equal(out.code, "invalid_argument", out.message);
    assertErrorInfo(out, "INVALID_ARGUMENT");
  });
});
