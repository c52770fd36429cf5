import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { startChildServer, type ChildServer } from "../support/child-server.js";

/** An OTLP/HTTP receiver: what `serve` POSTs to /v1/traces. */
interface Export {
  contentType: string;
  body: Buffer;
}

let receiver: http.Server;
let endpoint: string;
const exports: Export[] = [];
const dirs: string[] = [];

before(async () => {
  receiver = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      if (req.url === "/v1/traces") exports.push({ contentType: req.headers["content-type"] ?? "", body: Buffer.concat(chunks) });
      res.writeHead(200, { "content-type": req.headers["content-type"] ?? "application/json" }).end(req.headers["content-type"]?.includes("json") ? "{}" : "");
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve));
  endpoint = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
});
after(async () => {
  receiver.closeAllConnections();
  await new Promise((resolve) => receiver.close(resolve));
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

async function child(env: Record<string, string>): Promise<ChildServer> {
  const dir = mkdtempSync(join(tmpdir(), "platform-api-otel-"));
  dirs.push(dir);
  return startChildServer({ db: join(dir, "db.sqlite"), registryDir: join(dir, "registry"), env: { OTEL_BSP_SCHEDULE_DELAY: "50", ...env } });
}

async function stop(server: ChildServer): Promise<void> {
  server.child.kill("SIGTERM");
  await server.exit;
}

/** Calls Ping over REST in a new trace; resolves with the trace id. */
async function tracedPing(server: ChildServer): Promise<string> {
  const traceId = randomBytes(16).toString("hex");
  const res = await fetch(`${server.apiUrl}/ping/v2/ping`, { headers: { traceparent: `00-${traceId}-${randomBytes(8).toString("hex")}-01` } });
  assert.equal(res.status, 200);
  await res.arrayBuffer();
  return traceId;
}

async function exported(match: (e: Export) => boolean): Promise<Export | undefined> {
  for (let i = 0; i < 150; i++) {
    const found = exports.find(match);
    if (found) return found;
    await new Promise((r) => setTimeout(r, 40));
  }
  return undefined;
}

describe("the OpenTelemetry SDK configured by OTEL_* variables", () => {
  test("OTEL_EXPORTER_OTLP_ENDPOINT alone: spans go out as OTLP/HTTP protobuf, in the caller's trace", async () => {
    const server = await child({ OTEL_EXPORTER_OTLP_ENDPOINT: endpoint });
    try {
      const traceId = await tracedPing(server);
      const found = await exported((e) => e.body.includes(Buffer.from(traceId, "hex")));
      assert.ok(found, `no export holds trace ${traceId} (${exports.length} exports)`);
      assert.equal(found.contentType, "application/x-protobuf");
    } finally {
      await stop(server);
    }
  });

  test("http/json: the spans of a REST call, with the service name from OTEL_SERVICE_NAME", async () => {
    const server = await child({ OTEL_EXPORTER_OTLP_ENDPOINT: endpoint, OTEL_EXPORTER_OTLP_PROTOCOL: "http/json", OTEL_SERVICE_NAME: "platform-api-test" });
    try {
      const traceId = await tracedPing(server);
      const found = await exported((e) => e.contentType.includes("json") && e.body.toString().includes(traceId));
      assert.ok(found, `no JSON export holds trace ${traceId}`);
      type Otlp = { resourceSpans: Array<{ resource: { attributes: Array<{ key: string; value: { stringValue?: string } }> }; scopeSpans: Array<{ spans: Array<{ traceId: string; name: string; kind: number }> }> }> };
      const body = JSON.parse(found.body.toString()) as Otlp;
      const names = body.resourceSpans.flatMap((r) => r.scopeSpans.flatMap((s) => s.spans.filter((span) => span.traceId === traceId).map((span) => span.name)));
      assert.ok(names.includes("platform.ping.v2.PingService/Ping"), names.join(", "));
      const service = body.resourceSpans[0].resource.attributes.find((a) => a.key === "service.name");
      assert.equal(service?.value.stringValue, "platform-api-test");
    } finally {
      await stop(server);
    }
  });

  test("an exporter it does not have is a one-line start-up error", async () => {
    await assert.rejects(child({ OTEL_TRACES_EXPORTER: "zipkin" }), (error: Error) => {
      assert.match(error.message, /exited \(2\)/);
      assert.match(error.message, /platform-api: OTEL_TRACES_EXPORTER=zipkin is not supported: use otlp, console or none/);
      assert.doesNotMatch(error.message, /\n\s+at /);
      return true;
    });
  });
});
