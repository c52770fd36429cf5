// test-process: own (installs the global OpenTelemetry tracer provider, propagator and context manager)
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { after, before, describe, test } from "node:test";
import * as grpc from "@grpc/grpc-js";
import { SpanKind, SpanStatusCode } from "@opentelemetry/api";
import { InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from "@opentelemetry/sdk-trace-base";
import { installTracing } from "../../src/telemetry/tracing-sdk.js";
import { startOidcIssuer, type OidcIssuer } from "../support/oidc-issuer.js";
import { startTestServer, type TestServer } from "../support/test-server.js";

const exporter = new InMemorySpanExporter();
let shutdown: () => Promise<void>;
let server: TestServer;
let issuer: OidcIssuer;

before(async () => {
  shutdown = installTracing([new SimpleSpanProcessor(exporter)]);
  server = await startTestServer({ upstreamIssuers: { allowHttp: true, allowPrivateAddresses: true } });
  issuer = await startOidcIssuer();
});
after(async () => {
  await server.close();
  await issuer.close();
  await shutdown();
});

/** A caller's W3C trace context: a new trace id and the caller's span id. */
function callerContext() {
  const traceId = randomBytes(16).toString("hex");
  const spanId = randomBytes(8).toString("hex");
  return { traceId, spanId, traceparent: `00-${traceId}-${spanId}-01` };
}

const spansOf = (traceId: string) => exporter.getFinishedSpans().filter((s) => s.spanContext().traceId === traceId);
const parentOf = (span: ReadableSpan) => span.parentSpanContext?.spanId;

/** Spans end when the answer is written: wait briefly for them. */
async function waitForSpans(traceId: string, count: number): Promise<ReadableSpan[]> {
  for (let i = 0; i < 100 && spansOf(traceId).length < count; i++) await new Promise((r) => setTimeout(r, 20));
  return spansOf(traceId);
}

function grpcPing(traceparent: string): Promise<void> {
  const client = new grpc.Client(`127.0.0.1:${server.apiPort}`, grpc.credentials.createInsecure());
  const metadata = new grpc.Metadata();
  metadata.set("traceparent", traceparent);
  return new Promise((resolve, reject) =>
    client.makeUnaryRequest("/platform.ping.v2.PingService/Ping", () => Buffer.alloc(0), (b: Buffer) => b, {}, metadata, (error) => {
      client.close();
      if (error) reject(error);
      else resolve();
    }),
  );
}

const PING = "platform.ping.v2.PingService/Ping";
const calls: Record<string, (traceparent: string) => Promise<unknown>> = {
  grpc: grpcPing,
  connect: (traceparent) => fetch(`${server.apiUrl}/${PING}`, { method: "POST", headers: { traceparent, "content-type": "application/json" }, body: "{}" }).then((r) => r.json()),
  "grpc-web": (traceparent) =>
    fetch(`${server.apiUrl}/${PING}`, { method: "POST", headers: { traceparent, "content-type": "application/grpc-web+proto" }, body: new Uint8Array(5) }).then((r) => r.arrayBuffer()),
  rest: (traceparent) => fetch(`${server.apiUrl}/ping/v2/ping`, { headers: { traceparent } }).then((r) => r.json()),
};

describe("spans", () => {
  for (const [protocol, call] of Object.entries(calls)) {
    test(`an RPC over ${protocol} is a server span in the caller's trace`, async () => {
      const caller = callerContext();
      await call(caller.traceparent);
      const spans = await waitForSpans(caller.traceId, protocol === "rest" ? 2 : 1);
      const rpc = spans.find((s) => s.name === PING);
      assert.ok(rpc, `spans: ${spans.map((s) => s.name).join(", ")}`);
      assert.equal(rpc.kind, SpanKind.SERVER);
      assert.equal(rpc.attributes["rpc.system"], "grpc");
      assert.equal(rpc.attributes["rpc.service"], "platform.ping.v2.PingService");
      assert.equal(rpc.attributes["rpc.method"], "Ping");
      assert.equal(rpc.attributes["rpc.grpc.status_code"], 0);
      assert.equal(rpc.attributes["platform.protocol"], protocol);
      if (protocol === "rest") {
        // REST: the HTTP request's span, child of the caller's, is the parent of the call's.
        const request = spans.find((s) => s.name === "GET rest");
        assert.ok(request);
        assert.equal(parentOf(request), caller.spanId);
        assert.equal(parentOf(rpc), request.spanContext().spanId);
        assert.equal(request.attributes["http.response.status_code"], 200);
      } else {
        assert.equal(parentOf(rpc), caller.spanId);
      }
    });
  }

  test("a failed RPC's span has an error status and its gRPC code", async () => {
    const caller = callerContext();
    const res = await fetch(`${server.apiUrl}/platform.iam.v2.GroupsService/GetGroup`, {
      method: "POST",
      headers: { traceparent: caller.traceparent, "content-type": "application/json" },
      body: JSON.stringify({ uid: server.org.uid }),
    });
    assert.equal(res.status, 401);
    const [span] = await waitForSpans(caller.traceId, 1);
    assert.equal(span.name, "platform.iam.v2.GroupsService/GetGroup");
    assert.equal(span.status.code, SpanStatusCode.ERROR);
    assert.equal(span.attributes["rpc.grpc.status_code"], 16);
  });

  test("a call without traceparent starts a trace of its own", async () => {
    const before = exporter.getFinishedSpans().length;
    await fetch(`${server.apiUrl}/ping/v2/ping`).then((r) => r.json());
    await new Promise((r) => setTimeout(r, 50));
    const fresh = exporter.getFinishedSpans().slice(before);
    const rpc = fresh.find((s) => s.name === PING);
    assert.ok(rpc);
    assert.match(rpc.spanContext().traceId, /^[0-9a-f]{32}$/);
    assert.notEqual(rpc.spanContext().traceId, "0".repeat(32));
  });

  test("a registry request is a server span named by its route, in the caller's trace", async () => {
    const caller = callerContext();
    const res = await fetch(`${server.registryUrl}/v2/`, { headers: { traceparent: caller.traceparent } });
    await res.arrayBuffer();
    const [span] = await waitForSpans(caller.traceId, 1);
    assert.equal(span.name, "GET version");
    assert.equal(span.kind, SpanKind.SERVER);
    assert.equal(parentOf(span), caller.spanId);
    assert.equal(span.attributes["http.route"], "version");
    assert.equal(span.attributes["http.response.status_code"], res.status);
  });

  test("the trace goes on to outgoing requests: the token exchange fetches the issuer's keys with a traceparent of the same trace", async () => {
    const auth = { authorization: `Bearer ${server.ownerToken}`, "content-type": "application/json" };
    const created = await fetch(`${server.apiUrl}/iam/v2/identities/${server.org.uid}`, {
      method: "POST",
      headers: auth,
      body: JSON.stringify({ name: "traced", claimMatch: { issuer: issuer.url, subject: "traced-job" } }),
    });
    const identity = ((await created.json()) as { uid: string }).uid;
    const caller = callerContext();
    const res = await fetch(`${server.apiUrl}/sts/exchange?identity=${identity}`, {
      method: "POST",
      headers: { authorization: `Bearer ${await issuer.issue({ sub: "traced-job" })}`, traceparent: caller.traceparent },
    });
    assert.equal(res.status, 200, await res.text());
    const outgoing = issuer.traceparents.filter((t) => t?.includes(caller.traceId));
    assert.ok(outgoing.length >= 1, `issuer saw: ${issuer.traceparents.join(", ")}`);
    const [span] = await waitForSpans(caller.traceId, 1);
    assert.equal(span.name, "POST sts");
    assert.ok(outgoing.every((t) => t!.split("-")[2] === span.spanContext().spanId), "the outgoing requests are children of the exchange's span");
  });
});

describe("request logs", () => {
  const lines = () => server.logs.map((l) => JSON.parse(l) as Record<string, unknown>);

  test("every request that reaches a host is logged with one duration field and a request id", async () => {
    const start = server.logs.length;
    await fetch(`${server.apiUrl}/no/such/path`).then((r) => r.arrayBuffer());
    await fetch(`${server.apiUrl}/.well-known/openid-configuration`).then((r) => r.arrayBuffer());
    await fetch(`${server.apiUrl}/sts/exchange`, { method: "POST" }).then((r) => r.arrayBuffer());
    await fetch(`${server.registryUrl}/v2/`).then((r) => r.arrayBuffer());
    await fetch(`${server.apiUrl}/ping/v2/ping`).then((r) => r.arrayBuffer());
    await new Promise((r) => setTimeout(r, 50));
    const logged = lines().slice(start);
    const request = (host: string, route: string) => logged.find((l) => l.msg === "request" && l.host === host && l.route === route);
    for (const [host, route, status] of [["api", "not_found", 404], ["api", "discovery", 200], ["api", "sts", 401], ["registry", "version", 401], ["api", "rest", 200]] as const) {
      const line = request(host, route);
      assert.ok(line, `${host} ${route}: ${JSON.stringify(logged)}`);
      assert.equal(line.status, status, `${host} ${route}`);
      assert.equal(typeof line.durationMs, "number");
      assert.match(String(line.requestId), /^[0-9a-f-]{36}$/);
      assert.equal(line.ms, undefined);
    }
    const call = logged.find((l) => l.msg === "call");
    assert.ok(call);
    assert.equal(typeof call.durationMs, "number");
    // The REST request and the call it made share the request id; the call's line names its trace.
    assert.equal(call.requestId, request("api", "rest")!.requestId);
    assert.match(String(call.traceId), /^[0-9a-f]{32}$/);
  });

  test("a caller's x-request-id is kept, echoed and logged on every protocol and on the registry", async () => {
    const id = (tag: string) => `req-${tag}-${randomBytes(4).toString("hex")}`;
    const connectId = id("connect");
    const connect = await fetch(`${server.apiUrl}/${PING}`, { method: "POST", headers: { "x-request-id": connectId, "content-type": "application/json" }, body: "{}" });
    await connect.arrayBuffer();
    assert.equal(connect.headers.get("x-request-id"), connectId);
    const restId = id("rest");
    const rest = await fetch(`${server.apiUrl}/ping/v2/ping`, { headers: { "x-request-id": restId } });
    await rest.arrayBuffer();
    assert.equal(rest.headers.get("x-request-id"), restId);
    const registryId = id("registry");
    const registry = await fetch(`${server.registryUrl}/v2/`, { headers: { "x-request-id": registryId } });
    await registry.arrayBuffer();
    assert.equal(registry.headers.get("x-request-id"), registryId);
    const failedId = id("failed");
    const failed = await fetch(`${server.apiUrl}/platform.iam.v2.GroupsService/GetGroup`, {
      method: "POST",
      headers: { "x-request-id": failedId, "content-type": "application/json" },
      body: JSON.stringify({ uid: server.org.uid }),
    });
    await failed.arrayBuffer();
    assert.equal(failed.headers.get("x-request-id"), failedId);
    await new Promise((r) => setTimeout(r, 50));
    const logged = lines();
    for (const given of [connectId, restId, registryId, failedId]) assert.ok(logged.some((l) => l.requestId === given), given);
    // An unusable id (too long) is replaced by a new one.
    const long = await fetch(`${server.apiUrl}/ping/v2/ping`, { headers: { "x-request-id": "x".repeat(200) } });
    await long.arrayBuffer();
    assert.match(long.headers.get("x-request-id") ?? "", /^[0-9a-f-]{36}$/);
  });
});
