import assert from "node:assert/strict";
import net from "node:net";
import { after, before, describe, test } from "node:test";
import { startTestServer, type TestServer } from "../support/test-server.js";

/**
 * HTTP/2 sessions whose peer never reads and never ends its request bodies do not hold connection
 * slots: a stream answered before its body ended is reset at the answer (as HTTP/1.1 closes the
 * connection), a stream whose body stalls is reset at the request timeout, and a session whose
 * streams are all answered or reset is closed within the keep-alive timeout, its connection cut if
 * the peer does not take the GOAWAY. With `--max-connections 20`, twenty such sessions lock nobody
 * out for longer than those timeouts.
 */
const LIMIT = 20;
const HEADERS_MS = 1000;
const KEEP_ALIVE_MS = 2000;
const REQUEST_MS = 3000;
/** Timers run late on a loaded 2-core machine; the sweeps add their interval. */
const SLACK_MS = 3000;

let server: TestServer;

before(async () => {
  server = await startTestServer({
    logLevel: "silent",
    limits: {
      maxConnections: LIMIT,
      headersTimeoutMs: HEADERS_MS,
      keepAliveTimeoutMs: KEEP_ALIVE_MS,
      requestTimeoutMs: REQUEST_MS,
      registryRequestTimeoutMs: 3_600_000,
      idleTimeoutMs: 3_600_000,
    },
  });
});

after(() => server.close());

function frame(type: number, flags: number, stream: number, payload: Buffer): Buffer {
  const head = Buffer.alloc(9);
  head.writeUIntBE(payload.length, 0, 3);
  head[3] = type;
  head[4] = flags;
  head.writeUInt32BE(stream, 5);
  return Buffer.concat([head, payload]);
}

/** An HPACK integer with an `n`-bit prefix, its first byte or-ed with `flags` (RFC 7541, 5.1). */
function hpackInteger(value: number, n: number, flags: number): number[] {
  const max = (1 << n) - 1;
  if (value < max) return [flags | value];
  const bytes = [flags | max];
  for (value -= max; value >= 128; value >>= 7) bytes.push((value & 127) | 128);
  bytes.push(value);
  return bytes;
}

/** An HPACK literal header field with incremental indexing, its name from the static table (RFC 7541, 6.2.1). */
function literal(nameIndex: number, value: string): Buffer {
  return Buffer.concat([Buffer.from([...hpackInteger(nameIndex, 6, 0x40), ...hpackInteger(value.length, 7, 0)]), Buffer.from(value, "latin1")]);
}

/**
 * A raw HTTP/2 connection that sends one POST to `path` with `headers` and the start of a body it
 * never ends, then never reads another byte (its socket paused) and never closes: the worst peer.
 * Resolves once the server has taken the connection.
 */
async function neverReadingPeer(port: number, path: string, headers: [number, string][] = []): Promise<{ socket: net.Socket }> {
  const socket = net.connect(port, "127.0.0.1");
  socket.on("error", () => {});
  await new Promise((resolve) => socket.once("connect", resolve));
  // :method POST (static 3), :scheme http (static 6), :path (name 4), :authority (name 1), content-type (name 31).
  const block = Buffer.concat([Buffer.from([0x83, 0x86]), literal(4, path), literal(1, "localhost"), ...headers.map(([index, value]) => literal(index, value))]);
  socket.write(
    Buffer.concat([
      Buffer.from("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"),
      frame(0x4, 0, 0, Buffer.alloc(0)), // SETTINGS
      frame(0x1, 0x4, 1, block), // HEADERS, END_HEADERS, no END_STREAM
      frame(0x0, 0, 1, Buffer.alloc(100)), // DATA, no END_STREAM
    ]),
  );
  // Let the server read what was sent, then stop reading its answers.
  await new Promise((resolve) => setTimeout(resolve, 50));
  socket.pause();
  return { socket };
}

/** Resolves with how long it took until a new client was served `path` on `port`, trying every 250 ms. */
async function servedAgain(port: number, path: string, withinMs: number): Promise<number> {
  const started = performance.now();
  for (;;) {
    const status = await fetch(`http://127.0.0.1:${port}${path}`, { signal: AbortSignal.timeout(1000) }).then(
      async (res) => (await res.arrayBuffer(), res.status),
      () => 0,
    );
    const ms = performance.now() - started;
    if (status !== 0) return ms;
    assert.ok(ms < withinMs, `no new client served within ${withinMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

describe(`twenty HTTP/2 peers that never read, with --max-connections ${LIMIT}`, () => {
  const cases = [
    {
      name: "unauthenticated POSTs to no route, answered 404 while their bodies never end",
      port: () => server.apiPort,
      path: "/no/such/path",
      headers: [] as [number, string][],
      // Reset at the answer; closed at the keep-alive timeout.
      withinMs: KEEP_ALIVE_MS + SLACK_MS,
    },
    {
      name: "unauthenticated registry uploads, answered 401 while their bodies never end",
      port: () => server.registryPort,
      path: "/v2/acme/app/blobs/uploads/",
      headers: [[31, "application/octet-stream"]] as [number, string][],
      withinMs: KEEP_ALIVE_MS + SLACK_MS,
    },
    {
      name: "authenticated gRPC calls whose request bodies stall",
      port: () => server.apiPort,
      path: "/platform.iam.v2.GroupsService/GetGroup",
      headers: () => [
        [31, "application/grpc"],
        [23, `Bearer ${server.ownerToken}`],
      ],
      // Reset at the request timeout; closed at the keep-alive timeout after.
      withinMs: REQUEST_MS + KEEP_ALIVE_MS + SLACK_MS,
    },
  ];

  for (const c of cases) {
    test(c.name, { timeout: 60_000 }, async () => {
      const headers = typeof c.headers === "function" ? c.headers() : c.headers;
      const held = await Promise.all(Array.from({ length: LIMIT }, () => neverReadingPeer(c.port(), c.path, headers as [number, string][])));
      try {
        const ms = await servedAgain(c.port(), c.port() === server.apiPort ? "/ping/v2/ping" : "/v2/", c.withinMs);
        assert.ok(ms < c.withinMs, `a new client was served after ${Math.round(ms)} ms`);
        // Every one of them is closed on the server's side (the peers, never reading, do not see it).
        const listener = c.port() === server.apiPort ? server.server.api.server : server.server.registry.server;
        const open = () => new Promise<number>((resolve, reject) => listener.getConnections((error, count) => (error ? reject(error) : resolve(count))));
        const started = performance.now();
        while ((await open()) > 0) {
          assert.ok(performance.now() - started < c.withinMs, `${await open()} connections still open`);
          await new Promise((resolve) => setTimeout(resolve, 100));
        }
      } finally {
        for (const h of held) h.socket.destroy();
      }
      // Room again for the next case.
      await new Promise((resolve) => setTimeout(resolve, 200));
    });
  }
});
