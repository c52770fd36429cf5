import assert from "node:assert/strict";
import http from "node:http";
import http2 from "node:http2";
import type { AddressInfo } from "node:net";
import { gzipSync } from "node:zlib";
import { after, before, describe, test } from "node:test";
import { create, toBinary } from "@bufbuild/protobuf";
import { Code, ConnectError, createContextValues, type Interceptor } from "@connectrpc/connect";
import { connectNodeAdapter } from "@connectrpc/connect-node";
import { ErrorInfoSchema } from "../../gen/google/rpc/error_details_pb.js";
import { Health, HealthCheckRequestSchema, HealthCheckResponse_ServingStatus, HealthListResponseSchema } from "../../gen/grpc/health/v1/health_pb.js";
import { GetGroupRequestSchema, ListGroupsRequestSchema } from "../../gen/platform/iam/v2/groups_service_pb.js";
import { markCachedAnswer } from "../../src/aip/cached-answer.js";
import { newChildUid } from "../../src/aip/uidp.js";
import { withConnectUnaryPath } from "../../src/transport/rpc/connect-unary.js";
import { encodedOnce } from "../../src/transport/rpc/encoded-once.js";
import { withGrpcUnaryPath } from "../../src/transport/rpc/grpc-unary.js";
import { frameworkErrorAsApiError, withFrameworkErrorsAsApiErrors } from "../../src/transport/rpc/framework-errors.js";
import { createLogger } from "../../src/logger.js";
import { createUnaryCaller, recordingRouter, type RecordedService, type UnaryCaller } from "../../src/transport/rpc/call.js";
import { h1Exchange, h2Exchange, type RawAnswer, type RawRequest } from "../support/raw-exchange.js";
import { startTestServer, type TestServer } from "../support/test-server.js";

/**
 * Connect unary POST calls are answered before connect-node's adapter (`src/transport/rpc/connect-unary.ts`),
 * and must answer byte for byte what the adapter with `withFrameworkErrorsAsApiErrors` answers.
 *
 * Equality is differential: every request of a table is sent twice, over HTTP/1.1 and over HTTP/2,
 * once as it is and once with `content-encoding: identity` added. The header means nothing to
 * the call (connect-es treats identity as no compression) but the fast path leaves every request
 * carrying `content-encoding` to the adapter, so the second answer is the adapter's. Status, every
 * response header but `date`, and the body bytes (compressed bodies too: gzip and brotli at zlib's
 * defaults are deterministic) must be equal.
 *
 * That the first request really took the fast path is shown where it can be counted without
 * anything added to production code for it: the second part builds the path exactly as
 * src/server/server.ts does (the adapter with its handlers wrapped by `withFrameworkErrorsAsApiErrors`,
 * `withConnectUnaryPath` in front with a caller from `createUnaryCaller`) around a small test
 * service, with counting wrappers on the `call` and `callError` it is given. Each fast-path case
 * must reach one of them and each fallback case (GET, a compressed body, a query, a streaming content type, a
 * `content-length` over the limit, an unknown protocol version) never, so the test fails
 * if the predicate never (or always) matches. That service also sets response headers and
 * trailers from its handler and an interceptor, on success and on error, which no production
 * handler does. The first part runs the real server (its interceptors set `x-request-id`).
 */
const DOMAIN = "connect-path.example.test";

type Exchange = (req: RawRequest) => Promise<RawAnswer>;

/**
 * `req` as it is, and `req` with `content-encoding: identity` (which sends it to the adapter); a
 * request with its own `content-encoding` (the adapter's either way) is sent twice as it is.
 */
async function bothWays(exchange: Exchange, req: RawRequest): Promise<{ fast: RawAnswer; adapter: RawAnswer }> {
  const fast = await exchange(req);
  const adapter = await exchange({ ...req, headers: { "content-encoding": "identity", ...req.headers } });
  return { fast, adapter };
}

function assertSameAnswer(fast: RawAnswer, adapter: RawAnswer): void {
  const withoutDate = (h: RawAnswer["headers"]) => Object.fromEntries(Object.entries(h).filter(([name]) => name !== "date"));
  assert.equal(fast.status, adapter.status, `status; fast body ${fast.body.toString("utf8").slice(0, 300)}`);
  assert.deepEqual(withoutDate(fast.headers), withoutDate(adapter.headers));
  assert.ok(fast.body.equals(adapter.body), `body bytes differ:\n fast    ${fast.body.toString("utf8").slice(0, 500)}\n adapter ${adapter.body.toString("utf8").slice(0, 500)}`);
  assert.equal(Object.keys(fast.headers).filter((name) => name.startsWith("grpc-")).length, 0, "no gRPC header on a Connect answer");
}

/** Waits (at most 2 s) for `done`. */
async function until(done: () => boolean, what: string): Promise<void> {
  for (const end = Date.now() + 2_000; !done(); await new Promise((resolve) => setTimeout(resolve, 5))) {
    if (Date.now() > end) assert.fail(`not within 2 s: ${what}`);
  }
}

const json = (value: unknown) => new TextEncoder().encode(JSON.stringify(value));

/** The two transports every case runs on. */
function transports(port: () => number, session: () => http2.ClientHttp2Session): Array<[string, Exchange]> {
  return [
    ["HTTP/1.1", (req) => h1Exchange(port(), req)],
    ["HTTP/2", (req) => h2Exchange(session(), req)],
  ];
}

/** `headers` with the body's `content-length`. */
const sized = (body: Uint8Array, headers: Record<string, string>): Record<string, string> => ({ ...headers, "content-length": String(body.byteLength) });

// ---- the real server ----

interface ServerCase {
  name: string;
  path: string;
  body: () => Uint8Array;
  headers?: Record<string, string>;
  /** No bearer token. */
  anonymous?: boolean;
  status: number;
  /** The content coding the answer must have (checks the case covers what it says). */
  encoding?: string;
  /** The request does not decode, so no interceptor runs (and none sets `x-request-id`). */
  undecodable?: boolean;
}

describe("Connect unary on the real server: the fast path answers as the adapter does", () => {
  let server: TestServer;
  let session: http2.ClientHttp2Session;
  const GET_GROUP = "/platform.iam.v2.GroupsService/GetGroup";
  const LIST_GROUPS = "/platform.iam.v2.GroupsService/ListGroups";
  const CREATE_GROUP = "/platform.iam.v2.GroupsService/CreateGroup";
  const get = () => ({ uid: server.org.uid });
  const list = () => toBinary(ListGroupsRequestSchema, create(ListGroupsRequestSchema, { pageSize: 100 }));

  before(async () => {
    server = await startTestServer({ logLevel: "silent", errorDomain: DOMAIN });
    session = http2.connect(server.apiUrl);
    // Enough groups that a page of them is well over the 1 KiB compression threshold.
    for (let i = 0; i < 30; i++) {
      const body = json({ parent: server.org.uid, group: { name: `group-${i}`, description: `the group number ${i} of the differential test` } });
      const out = await h1Exchange(server.apiPort, { path: CREATE_GROUP, headers: sized(body, { "content-type": "application/json", authorization: `Bearer ${server.ownerToken}` }), body });
      assert.equal(out.status, 200, out.body.toString("utf8"));
    }
  });

  after(async () => {
    session.close();
    await server.close();
  });

  const CASES: ServerCase[] = [
    { name: "JSON success", path: GET_GROUP, body: () => json(get()), status: 200 },
    { name: "binary success", path: GET_GROUP, headers: { "content-type": "application/proto" }, body: () => toBinary(GetGroupRequestSchema, create(GetGroupRequestSchema, get())), status: 200 },
    { name: "JSON with charset, any case", path: GET_GROUP, headers: { "content-type": "Application/JSON; charset=UTF-8" }, body: () => json(get()), status: 200 },
    { name: "connect-protocol-version 1 and a deadline not reached", path: GET_GROUP, headers: { "connect-protocol-version": "1", "connect-timeout-ms": "60000" }, body: () => json(get()), status: 200 },
    { name: "an unknown JSON field is refused, named in a BadRequest", path: GET_GROUP, body: () => json({ ...get(), noSuchField: [1, 2] }), status: 400, undecodable: true },
    { name: "a large JSON answer, uncompressed", path: LIST_GROUPS, body: () => json({ pageSize: 100 }), status: 200 },
    { name: "a large JSON answer, gzip accepted", path: LIST_GROUPS, headers: { "accept-encoding": "gzip" }, body: () => json({ pageSize: 100 }), status: 200, encoding: "gzip" },
    { name: "a large JSON answer, br accepted", path: LIST_GROUPS, headers: { "accept-encoding": "br" }, body: () => json({ pageSize: 100 }), status: 200, encoding: "br" },
    { name: "a large JSON answer, the first offered coding chosen", path: LIST_GROUPS, headers: { "accept-encoding": "deflate, br , gzip" }, body: () => json({ pageSize: 100 }), status: 200, encoding: "br" },
    { name: "a large JSON answer, no offered coding accepted", path: LIST_GROUPS, headers: { "accept-encoding": "deflate, gzip;q=1" }, body: () => json({ pageSize: 100 }), status: 200 },
    { name: "a large binary answer, gzip accepted", path: LIST_GROUPS, headers: { "content-type": "application/proto", "accept-encoding": "gzip" }, body: list, status: 200, encoding: "gzip" },
    { name: "a small answer is not compressed", path: GET_GROUP, headers: { "accept-encoding": "gzip" }, body: () => json(get()), status: 200 },
    { name: "no token: unauthenticated", path: GET_GROUP, anonymous: true, body: () => json(get()), status: 401 },
    { name: "a validation error with BadRequest", path: CREATE_GROUP, body: () => json({ parent: server.org.uid, group: { description: "no name" } }), status: 400 },
    { name: "a validation error, gzip accepted", path: LIST_GROUPS, headers: { "accept-encoding": "gzip" }, body: () => json({ pageSize: -1 }), status: 400 },
    { name: "not found", path: GET_GROUP, body: () => json({ uid: newChildUid(server.org.uid) }), status: 404 },
    { name: "JSON that does not parse", path: GET_GROUP, body: () => new TextEncoder().encode('{"uid": '), status: 400, undecodable: true },
    { name: "JSON of the wrong type", path: GET_GROUP, body: () => json({ uid: 5 }), status: 400, undecodable: true },
    { name: "an empty JSON body", path: GET_GROUP, body: () => new Uint8Array(0), status: 400, undecodable: true },
    { name: "binary that does not parse", path: GET_GROUP, headers: { "content-type": "application/proto" }, body: () => new Uint8Array([0x0a, 0x80]), status: 400, undecodable: true },
    // A call whose deadline is spent when it arrives is not run (the deadline interceptor), on both ways.
    { name: "a deadline already passed (connect-timeout-ms 0)", path: LIST_GROUPS, headers: { "connect-timeout-ms": "0" }, body: () => json({ pageSize: 100 }), status: 504 },
  ];

  for (const [transport, exchange] of transports(
    () => server.apiPort,
    () => session,
  )) {
    for (const c of CASES) {
      test(`${transport}: ${c.name}`, async () => {
        const body = c.body();
        const headers = sized(body, {
          "content-type": "application/json",
          "x-request-id": `differential-${c.name.replace(/\W+/g, "-")}`,
          ...(c.anonymous ? {} : { authorization: `Bearer ${server.ownerToken}` }),
          ...c.headers,
        });
        const { fast, adapter } = await bothWays(exchange, { path: c.path, headers, body });
        assertSameAnswer(fast, adapter);
        assert.equal(fast.status, c.status, fast.body.toString("utf8").slice(0, 300));
        assert.equal(fast.headers["content-encoding"], c.encoding);
        assert.equal(fast.headers["x-request-id"], c.undecodable ? undefined : headers["x-request-id"]);
      });
    }
  }
});

// ---- the path itself, counted ----

const MAX_BODY = 4096;
const CHECK = "/grpc.health.v1.Health/Check";
const LIST = "/grpc.health.v1.Health/List";
/** A message long enough that an error answer carrying it is over the compression threshold. */
const LONG = "a message long enough to be compressed ".repeat(40);

/** Why the last "slow" check's signal was aborted. */
let slowAborted: unknown;

/** The one answer List gives, kept (marked by `markCachedAnswer`), well over 1 KiB encoded. */
const kept = markCachedAnswer(
  create(HealthListResponseSchema, {
    statuses: Object.fromEntries(Array.from({ length: 60 }, (_, i) => [`platform.test.v1.Service${i}`, { status: HealthCheckResponse_ServingStatus.SERVING }])),
  }),
);

/** The test service: Check answers by its `service` field, setting a header and a trailer first; List answers `kept`. */
const health = {
  list() {
    return kept;
  },
  async check(req: { service: string }, ctx: { responseHeader: Headers; responseTrailer: Headers; signal: AbortSignal }) {
    ctx.responseHeader.set("x-handler", "header from the handler");
    ctx.responseTrailer.append("x-handler", "trailer from the handler");
    ctx.responseTrailer.append("x-handler", "a second value");
    switch (req.service) {
      case "missing":
        throw new ConnectError("no such service", Code.NotFound, { "x-error": "error metadata" });
      case "explained":
        // An error that already carries an ErrorInfo is not rewritten: its body may be compressed.
        throw new ConnectError(LONG, Code.FailedPrecondition, { "x-error": "error metadata" }, [{ desc: ErrorInfoSchema, value: { reason: "EXPLAINED", domain: DOMAIN } }]);
      case "crash":
        throw new Error("not a ConnectError");
      case "slow":
        if (!ctx.signal.aborted) await new Promise((resolve) => ctx.signal.addEventListener("abort", resolve));
        slowAborted = ctx.signal.reason;
        throw ctx.signal.reason;
      default:
        return { status: HealthCheckResponse_ServingStatus.SERVING };
    }
  },
};

/** Sets a response header and trailer on a successful answer. */
const marking: Interceptor = (next) => async (req) => {
  const res = await next(req);
  res.header.set("x-interceptor", "header from an interceptor");
  if (!res.stream) res.trailer.set("x-interceptor", "trailer from an interceptor");
  return res;
};

interface PathCase {
  name: string;
  method?: string;
  path?: string;
  headers?: Record<string, string>;
  body?: Uint8Array;
  /** Whether the fast path answers it. */
  fast: boolean;
}

describe("Connect unary path around a test service: which requests it takes, trailers, errors", () => {
  let h1: http.Server;
  let h2: http2.Http2Server;
  let session: http2.ClientHttp2Session;
  /** Calls of the fast path's `call` and `callError` (a request that does not decode reaches only the latter). */
  let calls = 0;

  before(async () => {
    const logger = createLogger("silent");
    const interceptors = [marking];
    const implementations: RecordedService[] = [];
    const adapter = connectNodeAdapter({
      interceptors,
      readMaxBytes: MAX_BODY,
      routes(r) {
        recordingRouter(r, implementations).service(Health, health as never);
        r.handlers.forEach((handler, i) => (r.handlers[i] = withFrameworkErrorsAsApiErrors(handler, logger, DOMAIN)));
      },
    });
    const caller = createUnaryCaller(implementations, interceptors, "connect");
    const counted: UnaryCaller = (method, call) => {
      calls++;
      return caller(method, call);
    };
    const handler = withConnectUnaryPath(
      {
        services: implementations.map((r) => r.service),
        call: counted,
        callError: (error, method) => {
          calls++;
          return frameworkErrorAsApiError(error, method.input.typeName, logger, DOMAIN);
        },
        contextValues: () => createContextValues(),
        maxBodyBytes: MAX_BODY,
      },
      adapter,
    );
    // As src/server/server.ts chains them: the gRPC unary path, then this one, then the adapter.
    const grpc = withGrpcUnaryPath(
      {
        services: implementations.map((r) => r.service),
        call: counted,
        callError: (error, method) => frameworkErrorAsApiError(error, method.input.typeName, logger, DOMAIN),
        contextValues: () => createContextValues(),
        maxBodyBytes: MAX_BODY,
      },
      handler,
    );
    h1 = http.createServer(grpc);
    h2 = http2.createServer(grpc);
    await new Promise<void>((resolve) => h1.listen(0, "127.0.0.1", resolve));
    await new Promise<void>((resolve) => h2.listen(0, "127.0.0.1", resolve));
    session = http2.connect(`http://127.0.0.1:${(h2.address() as AddressInfo).port}`);
  });

  after(async () => {
    session.close();
    await new Promise((resolve) => h1.close(resolve));
    await new Promise((resolve) => h2.close(resolve));
  });

  const check = (service: string) => json({ service });
  const checkBinary = (service: string) => toBinary(HealthCheckRequestSchema, create(HealthCheckRequestSchema, { service }));

  const CASES: PathCase[] = [
    { name: "JSON success: the handler's and the interceptor's headers, trailers as trailer-*", body: check(""), fast: true },
    { name: "binary success", headers: { "content-type": "application/proto" }, body: checkBinary(""), fast: true },
    { name: "JSON charset without a space", headers: { "content-type": "application/json;charset=utf8" }, body: check(""), fast: true },
    { name: "an error with metadata: rewritten with an ErrorInfo, headers and trailers kept", body: check("missing"), fast: true },
    { name: "an error with an ErrorInfo, gzip accepted: its body compressed as the adapter does", headers: { "accept-encoding": "gzip" }, body: check("explained"), fast: true },
    { name: "an error with an ErrorInfo, br accepted", headers: { "accept-encoding": "br" }, body: check("explained"), fast: true },
    { name: "a handler failing with a non-ConnectError", body: check("crash"), fast: true },
    { name: "a deadline reached while the handler waits", headers: { "connect-timeout-ms": "1" }, body: check("slow"), fast: true },
    { name: "a binary body that does not parse", headers: { "content-type": "application/proto" }, body: new Uint8Array([0x0a, 0x80]), fast: true },
    { name: "a kept answer, JSON", path: LIST, body: json({}), fast: true },
    { name: "a kept answer, binary", path: LIST, headers: { "content-type": "application/proto" }, body: new Uint8Array(0), fast: true },
    { name: "a kept answer, JSON, gzip accepted", path: LIST, headers: { "accept-encoding": "gzip" }, body: json({}), fast: true },
    { name: "a kept answer, binary, br accepted", path: LIST, headers: { "content-type": "application/proto", "accept-encoding": "br" }, body: new Uint8Array(0), fast: true },
    // The adapter's: everything else.
    { name: "a GET", method: "GET", path: `${CHECK}?connect=v1&encoding=json&message=${encodeURIComponent('{"service":""}')}`, fast: false },
    { name: "a gzip body", headers: { "content-encoding": "gzip" }, body: gzipSync(check("")), fast: false },
    { name: "an identity body (content-encoding present)", headers: { "content-encoding": "identity" }, body: check(""), fast: false },
    { name: "a query string on a POST", path: `${CHECK}?x=1`, body: check(""), fast: false },
    { name: "a streaming content type", headers: { "content-type": "application/connect+json" }, body: check(""), fast: false },
    { name: "a gRPC-Web content type", headers: { "content-type": "application/grpc-web+json" }, body: check(""), fast: false },
    { name: "an unsupported content type", headers: { "content-type": "text/plain" }, body: check(""), fast: false },
    { name: "a body over the limit", body: json({ service: "x".repeat(MAX_BODY) }), fast: false },
    { name: "an unknown protocol version", headers: { "connect-protocol-version": "2" }, body: check(""), fast: false },
    { name: "an invalid connect-timeout-ms", headers: { "connect-timeout-ms": "soon" }, body: check(""), fast: false },
    { name: "a streaming method", path: "/grpc.health.v1.Health/Watch", body: check(""), fast: false },
    { name: "an unknown path", path: "/grpc.health.v1.Health/Nope", body: check(""), fast: false },
  ];

  for (const [transport, exchange] of transports(
    () => (h1.address() as AddressInfo).port,
    () => session,
  )) {
    for (const c of CASES) {
      test(`${transport}: ${c.name}`, async () => {
        const body = c.body;
        const headers = body ? sized(body, { "content-type": "application/json", ...c.headers }) : { ...c.headers };
        const before = calls;
        const { fast, adapter } = await bothWays(exchange, { method: c.method, path: c.path ?? CHECK, headers, body });
        if (c.fast) assert.ok(calls > before, "the fast path answered the first request (the adapter the second)");
        else assert.equal(calls, before, "the adapter answered both");
        assertSameAnswer(fast, adapter);
      });
    }
  }

  // connect-es clients on Node send no content-length (HTTP/1.1 chunked, HTTP/2 without it): their calls take the path too.
  const unsized: Array<[string, Exchange]> = [
    ["HTTP/1.1 chunked", (req) => h1Exchange((h1.address() as AddressInfo).port, { ...req, headers: { "transfer-encoding": "chunked", ...req.headers } })],
    ["HTTP/2", (req) => h2Exchange(session, req)],
  ];
  for (const [transport, exchange] of unsized) {
    test(`${transport} without content-length: the path's answer, the adapter's`, async () => {
      const before = calls;
      const { fast, adapter } = await bothWays(exchange, { path: CHECK, headers: { "content-type": "application/json" }, body: check("") });
      assert.ok(calls > before, "the fast path answered the first request");
      assertSameAnswer(fast, adapter);
      assert.equal(fast.status, 200);
    });

    test(`${transport} without content-length, a body over the limit: RESOURCE_EXHAUSTED, as the adapter answers`, async () => {
      const { fast, adapter } = await bothWays(exchange, { path: CHECK, headers: { "content-type": "application/json" }, body: json({ service: "x".repeat(MAX_BODY) }) });
      assertSameAnswer(fast, adapter);
      assert.equal(fast.status, 429);
      assert.equal((JSON.parse(fast.body.toString("utf8")) as { code: string }).code, "resource_exhausted");
    });
  }

  test("a cached answer is encoded and compressed once: its kept encodings are the bytes sent", async () => {
    const port = (h1.address() as AddressInfo).port;
    const notAgain = (): never => {
      throw new Error("the fast path did not keep this encoding");
    };
    for (const [type, format] of [
      ["application/json", "connect json"],
      ["application/proto", "binary"],
    ]) {
      const body = type === "application/json" ? json({}) : new Uint8Array(0);
      const plain = await h1Exchange(port, { path: LIST, headers: sized(body, { "content-type": type }), body });
      const gzipped = await h1Exchange(port, { path: LIST, headers: sized(body, { "content-type": type, "accept-encoding": "gzip" }), body });
      assert.equal(gzipped.headers["content-encoding"], "gzip");
      assert.ok(Buffer.from(encodedOnce(kept, format, notAgain)).equals(plain.body));
      assert.ok(Buffer.from(await encodedOnce(kept, `${format} gzip`, notAgain)).equals(gzipped.body));
    }
  });

  test("trailers and headers are on the answer, an error's too", async () => {
    const ok = await h1Exchange((h1.address() as AddressInfo).port, { path: CHECK, headers: sized(check(""), { "content-type": "application/json" }), body: check("") });
    assert.equal(ok.headers["x-handler"], "header from the handler");
    assert.equal(ok.headers["x-interceptor"], "header from an interceptor");
    assert.equal(ok.headers["trailer-x-handler"], "trailer from the handler, a second value");
    assert.equal(ok.headers["trailer-x-interceptor"], "trailer from an interceptor");
    const failed = await h1Exchange((h1.address() as AddressInfo).port, { path: CHECK, headers: sized(check("missing"), { "content-type": "application/json" }), body: check("missing") });
    assert.equal(failed.status, 404);
    assert.equal(failed.headers["x-error"], "error metadata");
    assert.equal(failed.headers["x-handler"], "header from the handler");
    assert.equal(failed.headers["trailer-x-handler"], "trailer from the handler, a second value");
    const error = JSON.parse(failed.body.toString("utf8")) as { code: string; details: Array<{ type: string }> };
    assert.equal(error.code, "not_found");
    assert.deepEqual(
      error.details.map((d) => d.type),
      [ErrorInfoSchema.typeName],
    );
  });

  for (const transport of ["HTTP/1.1", "HTTP/2", "gRPC"]) {
    test(`${transport}: a client leaving aborts the call with CANCELED`, async () => {
      const before = calls;
      slowAborted = undefined;
      const body = check("slow");
      const headers = sized(body, { "content-type": "application/json" });
      let leave: () => void;
      if (transport === "gRPC") {
        const message = checkBinary("slow");
        const frame = Buffer.concat([Buffer.from([0, 0, 0, 0, message.byteLength]), message]);
        const stream = session.request({ ":method": "POST", ":path": CHECK, "content-type": "application/grpc", te: "trailers" });
        stream.on("error", () => {});
        stream.end(frame);
        leave = () => stream.close(http2.constants.NGHTTP2_CANCEL);
      } else if (transport === "HTTP/2") {
        const stream = session.request({ ":method": "POST", ":path": CHECK, ...headers });
        stream.on("error", () => {});
        stream.end(body);
        leave = () => stream.close(http2.constants.NGHTTP2_CANCEL);
      } else {
        const req = http.request({ host: "127.0.0.1", port: (h1.address() as AddressInfo).port, method: "POST", path: CHECK, headers, agent: false });
        req.on("error", () => {});
        req.end(body);
        leave = () => req.destroy();
      }
      await until(() => calls > before, "the call started");
      leave();
      await until(() => slowAborted !== undefined, "the handler's signal was aborted");
      assert.equal((slowAborted as ConnectError).code, Code.Canceled);
    });
  }
});
