import assert from "node:assert/strict";
import http from "node:http";
import http2 from "node:http2";
import net from "node:net";
import { after, before, describe, test } from "node:test";
import { startTestServer, type TestServer } from "../support/test-server.js";

/**
 * Slow, silent and idle connections are closed after the configured times on both
 * hosts and both HTTP versions, while other clients keep being served. The
 * figures are short here; production defaults are in `defaultLimits`.
 */
const HEADERS_MS = 1000;
const KEEP_ALIVE_MS = 1000;
const IDLE_MS = 1500;
const REQUEST_MS = 2500;
/** Node checks header and request timeouts on an interval (a quarter of the headers timeout here), and a loaded machine fires timers late. */
const SLACK_MS = 2000;
/** Each test's own bound: a connection that is never closed fails the test instead of hanging it. */
const BOUNDED = { timeout: 15_000 };

let server: TestServer;

before(async () => {
  server = await startTestServer({
    logLevel: "silent",
    limits: {
      headersTimeoutMs: HEADERS_MS,
      keepAliveTimeoutMs: KEEP_ALIVE_MS,
      idleTimeoutMs: IDLE_MS,
      requestTimeoutMs: REQUEST_MS,
      registryRequestTimeoutMs: REQUEST_MS,
      maxConnections: 5000,
    },
  });
});

after(() => server.close());

interface Closed {
  ms: number;
  data: string;
}

/** Opens a TCP connection, writes `bytes` (if any) and resolves when the server closes it. */
async function rawConnection(port: number, bytes?: string | Buffer): Promise<{ socket: net.Socket; closed: Promise<Closed> }> {
  const socket = net.connect(port, "127.0.0.1");
  await new Promise<void>((resolve, reject) => socket.once("connect", resolve).once("error", reject));
  const started = performance.now();
  let data = "";
  socket.on("data", (chunk) => (data += chunk.toString("latin1")));
  socket.on("error", () => {});
  const closed = new Promise<Closed>((resolve) => socket.once("close", () => resolve({ ms: performance.now() - started, data })));
  if (bytes !== undefined) socket.write(bytes);
  return { socket, closed };
}

function assertClosedAfter(closed: Closed, ms: number): void {
  assert.ok(closed.ms >= ms - 100, `closed too early, after ${Math.round(closed.ms)} ms`);
  assert.ok(closed.ms <= ms + SLACK_MS, `closed too late, after ${Math.round(closed.ms)} ms`);
}

/** One Connect call over a fresh HTTP/1.1 connection; its latency. */
async function pingLatency(): Promise<number> {
  const started = performance.now();
  const res = await fetch(`${server.apiUrl}/platform.ping.v2.PingService/Ping`, {
    method: "POST",
    headers: { "content-type": "application/json", connection: "close" },
    body: "{}",
  });
  assert.equal(res.status, 200);
  await res.arrayBuffer();
  return performance.now() - started;
}

/** An HTTP/2 request on `session`; resolves with its :status. */
function h2Get(session: http2.ClientHttp2Session, path: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const stream = session.request({ ":path": path });
    let status = 0;
    stream.on("response", (h) => (status = Number(h[":status"])));
    stream.on("data", () => {});
    stream.on("end", () => resolve(status));
    stream.on("error", reject);
  });
}

for (const host of ["api", "registry"] as const) {
  // The cases use separate connections and only wait: they run together.
  describe(`the ${host} host`, { concurrency: true }, () => {
    const port = () => (host === "api" ? server.apiPort : server.registryPort);

    test("partial HTTP/1.1 headers are answered 408 and closed after the headers timeout", BOUNDED, async () => {
      const { closed } = await rawConnection(port(), "GET /v2/ HTTP/1.1\r\nHost: x\r\nX-Slow: ");
      const out = await closed;
      assert.match(out.data, /^HTTP\/1\.1 408 /);
      assertClosedAfter(out, HEADERS_MS);
    });

    test("a connection that sends nothing is closed after the headers timeout", BOUNDED, async () => {
      assertClosedAfter(await (await rawConnection(port())).closed, HEADERS_MS);
    });

    test("a partial HTTP/2 preface is closed after the headers timeout", BOUNDED, async () => {
      assertClosedAfter(await (await rawConnection(port(), "PRI * HTTP/2.0\r\n")).closed, HEADERS_MS);
    });

    test("an HTTP/2 header block left unfinished (HEADERS without END_HEADERS, written at once) is closed after the headers timeout", BOUNDED, async () => {
      const frame = (type: number, flags: number, stream: number, payload: Buffer) => {
        const head = Buffer.alloc(9);
        head.writeUIntBE(payload.length, 0, 3);
        head[3] = type;
        head[4] = flags;
        head.writeUInt32BE(stream, 5);
        return Buffer.concat([head, payload]);
      };
      // The preface, an empty SETTINGS, then HEADERS (END_STREAM, no END_HEADERS) holding :method GET, :scheme http, :path /.
      const bytes = Buffer.concat([Buffer.from("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"), frame(0x4, 0, 0, Buffer.alloc(0)), frame(0x1, 0x1, 1, Buffer.from([0x82, 0x86, 0x84]))]);
      assertClosedAfter(await (await rawConnection(port(), bytes)).closed, HEADERS_MS);
    });

    test("an HTTP/1.1 connection idle after its answer is closed after the keep-alive timeout", BOUNDED, async () => {
      const { closed } = await rawConnection(port(), "GET /v2/ HTTP/1.1\r\nHost: x\r\n\r\n");
      const out = await closed;
      assert.match(out.data, /^HTTP\/1\.1 \d{3} /);
      // Node keeps a kept-alive socket one second longer than it announces.
      assertClosedAfter(out, KEEP_ALIVE_MS + 1000);
    });

    test("a request answered before its body ended: the rest must come within the headers timeout", BOUNDED, async () => {
      const { closed } = await rawConnection(port(), "POST /v2/ HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n0123456789");
      const out = await closed;
      assert.match(out.data, /^HTTP\/1\.1 4\d\d /);
      assertClosedAfter(out, HEADERS_MS);
    });

    if (host === "api") {
      test("a request whose body stalls before it is answered is closed after the idle timeout", BOUNDED, async () => {
        const { closed } = await rawConnection(port(), "POST /platform.ping.v2.PingService/Ping HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{");
        assertClosedAfter(await closed, IDLE_MS);
      });
    }

    test("an HTTP/2 session that sends no request is closed after the headers timeout", BOUNDED, async () => {
      const session = http2.connect(`http://127.0.0.1:${port()}`);
      session.on("error", () => {});
      const started = performance.now();
      await new Promise((resolve) => session.once("close", resolve));
      assertClosedAfter({ ms: performance.now() - started, data: "" }, HEADERS_MS);
    });

    test("an HTTP/2 session idle after its requests gets GOAWAY after the keep-alive timeout", BOUNDED, async () => {
      const session = http2.connect(`http://127.0.0.1:${port()}`);
      session.on("error", () => {});
      const goaway = new Promise((resolve) => session.once("goaway", resolve));
      const closed = new Promise((resolve) => session.once("close", resolve));
      assert.ok((await h2Get(session, host === "api" ? "/ping/v2/ping" : "/v2/")) > 0);
      const started = performance.now();
      await goaway;
      await closed;
      assertClosedAfter({ ms: performance.now() - started, data: "" }, KEEP_ALIVE_MS);
    });

    test("an HTTP/2 request whose body stalls is reset (after the request timeout, or at once when answered before it ended); its session goes on", BOUNDED, async () => {
      const session = http2.connect(`http://127.0.0.1:${port()}`);
      session.on("error", () => {});
      // On the API a handler that reads the whole body before it answers: CANCEL at the request
      // timeout. On the registry an unauthenticated upload, answered 401 at once: the rest of its
      // body is not wanted, and the stream is reset with NO_ERROR right after the answer.
      const path = host === "api" ? "/platform.ping.v2.PingService/Ping" : "/v2/x/blobs/uploads/";
      const stream = session.request({ ":method": "POST", ":path": path, "content-type": "application/grpc", te: "trailers" }, { endStream: false });
      stream.on("error", () => {});
      stream.resume();
      stream.write("0123");
      const started = performance.now();
      await new Promise((resolve) => stream.once("close", resolve));
      const ms = performance.now() - started;
      if (host === "api") {
        assert.equal(stream.rstCode, http2.constants.NGHTTP2_CANCEL);
        assertClosedAfter({ ms, data: "" }, REQUEST_MS);
      } else {
        assert.equal(stream.rstCode, http2.constants.NGHTTP2_NO_ERROR);
        assert.ok(ms < SLACK_MS, `reset after ${Math.round(ms)} ms`);
      }
      assert.ok((await h2Get(session, host === "api" ? "/ping/v2/ping" : "/v2/")) > 0);
      session.close();
    });
  });
}

describe("long-lived HTTP/2 streams", () => {
  test("a health Watch stream outlives the keep-alive and request timeouts", BOUNDED, async () => {
    const session = http2.connect(server.apiUrl);
    session.on("error", () => {});
    let goaway = false;
    session.on("goaway", () => (goaway = true));
    const stream = session.request({ ":method": "POST", ":path": "/grpc.health.v1.Health/Watch", "content-type": "application/grpc", te: "trailers" });
    stream.on("error", () => {});
    const firstMessage = new Promise((resolve) => stream.once("data", resolve));
    stream.end(Buffer.from([0, 0, 0, 0, 0]));
    await firstMessage;
    await new Promise((resolve) => setTimeout(resolve, REQUEST_MS + KEEP_ALIVE_MS + 500));
    assert.equal(stream.closed, false);
    assert.equal(goaway, false);
    stream.close();
    session.close();
  });
});

describe("floods of slow or silent connections", () => {
  async function whileFlooded(count: number, bytes: string | undefined): Promise<void> {
    const flood = await Promise.all(Array.from({ length: count }, () => rawConnection(server.apiPort, bytes)));
    // Meanwhile a well-behaved client is served at once, over and over.
    const latencies: number[] = [];
    while (latencies.length < 10) latencies.push(await pingLatency());
    // The median, not the maximum: a loaded 2-core machine (CI, other test files) may delay any one call.
    const median = [...latencies].sort((a, b) => a - b)[latencies.length >> 1];
    assert.ok(median < 500 && Math.max(...latencies) < 3000, `latencies ${latencies.map(Math.round).join(", ")} ms`);
    const closed = await Promise.all(flood.map((f) => f.closed));
    const slowest = Math.max(...closed.map((c) => c.ms));
    assert.ok(slowest <= HEADERS_MS + SLACK_MS + 500, `the last flood connection closed after ${Math.round(slowest)} ms`);
  }

  test("250 slowloris connections (partial headers) are all closed; a client is served meanwhile", BOUNDED, () =>
    whileFlooded(250, "GET / HTTP/1.1\r\nHost: x\r\n"));

  test("1000 silent connections are all closed; a client is served meanwhile", BOUNDED, () => whileFlooded(1000, undefined));
});

describe("the connection limit", () => {
  let limited: TestServer;
  const LIMIT = 5;

  before(async () => {
    limited = await startTestServer({ logLevel: "silent", limits: { maxConnections: LIMIT } });
  });
  after(() => limited.close());

  test("a connection beyond the limit is closed at once; connections already open keep being served", BOUNDED, async () => {
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    const get = () =>
      new Promise<number>((resolve, reject) => {
        http
          .get({ host: "127.0.0.1", port: limited.apiPort, path: "/ping/v2/ping", agent }, (res) => {
            res.resume();
            res.on("end", () => resolve(res.statusCode ?? 0));
          })
          .on("error", reject);
      });
    assert.equal(await get(), 200);
    const silent = await Promise.all(Array.from({ length: LIMIT - 1 }, () => rawConnection(limited.apiPort)));
    const refused = await rawConnection(limited.apiPort);
    const out = await refused.closed;
    assert.equal(out.data, "");
    assert.ok(out.ms < 500, `closed after ${Math.round(out.ms)} ms`);
    // The kept-alive client still has its connection.
    assert.equal(await get(), 200);
    for (const s of silent) s.socket.destroy();
    await Promise.all(silent.map((s) => s.closed));
    agent.destroy();
    // With room again (once the server has seen the closes), new connections are served.
    await new Promise((resolve) => setTimeout(resolve, 200));
    assert.ok((await fetch(`${limited.apiUrl}/ping/v2/ping`)).ok);
  });
});
