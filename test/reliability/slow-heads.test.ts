import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import net from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import tls from "node:tls";
import { after, before, describe, test } from "node:test";
import { makeCertificate } from "../support/osv-feed-server.js";
import { startTestServer, type TestServer } from "../support/test-server.js";

/**
 * Slow-loris on HTTP/1.1: a request head not complete within the headers timeout from the
 * connection's first byte is closed (408 or a plain close), whether its bytes stopped or trickle,
 * on the API host, the registry host and the metrics listener, in cleartext and over TLS (the
 * metrics listener is always cleartext). A thousand such connections count against the connection
 * limit, do not delay other clients, and are all reaped.
 */
const HEADERS_MS = 1000;
/** Node checks header timeouts on an interval, and a loaded machine fires timers late. */
const SLACK_MS = 2000;
const BOUNDED = { timeout: 20_000 };
/** The reproduction: a head whose last line ended, with no blank line after it. */
const STOPPED_HEAD = "GET /ping/v2/ping HTTP/1.1\r\nHost: x\r\nX-Slow: 1\r\n";

const dir = mkdtempSync(join(tmpdir(), "platform-api-slow-heads-"));
let clear: TestServer;
let secure: TestServer;

before(async () => {
  const files = await makeCertificate(dir);
  const limits = { headersTimeoutMs: HEADERS_MS, keepAliveTimeoutMs: 30_000, idleTimeoutMs: 60_000, requestTimeoutMs: 60_000, registryRequestTimeoutMs: 3_600_000, maxConnections: 1100 };
  [clear, secure] = await Promise.all([
    startTestServer({ logLevel: "silent", limits }),
    startTestServer({ logLevel: "silent", limits, tls: { cert: readFileSync(files.certPath), key: readFileSync(files.keyPath) } }),
  ]);
});

after(async () => {
  await Promise.all([clear?.close(), secure?.close()]);
  rmSync(dir, { recursive: true, force: true });
});

interface Closed {
  /** From the connection's first byte to its close. */
  ms: number;
  data: string;
}

/**
 * A connection that writes `head`'s bytes (at once, or one line every `trickleMs`, over and over)
 * and never ends its head; `closed` resolves when the server closes it.
 */
async function slowHead(port: number, options: { tls: boolean; head?: string; trickleMs?: number }): Promise<{ socket: net.Socket; closed: Promise<Closed> }> {
  const socket: net.Socket = options.tls ? tls.connect({ port, host: "127.0.0.1", rejectUnauthorized: false, ALPNProtocols: ["http/1.1"] }) : net.connect(port, "127.0.0.1");
  socket.on("error", () => {});
  const started = performance.now();
  await new Promise<void>((resolve, reject) => socket.once(options.tls ? "secureConnect" : "connect", () => resolve()).once("error", reject));
  let data = "";
  socket.on("data", (chunk: Buffer) => (data += chunk.toString("latin1")));
  let trickle: NodeJS.Timeout | undefined;
  const closed = new Promise<Closed>((resolve) =>
    socket.once("close", () => {
      clearInterval(trickle);
      resolve({ ms: performance.now() - started, data });
    }),
  );
  if (options.head !== undefined) {
    if (options.trickleMs === undefined) socket.write(options.head);
    else {
      const lines = options.head.split(/(?<=\r\n)/);
      let next = 0;
      socket.write(lines[next++]);
      trickle = setInterval(() => socket.writable && socket.write(next < lines.length ? lines[next++] : "X-More: 1\r\n"), options.trickleMs);
    }
  }
  return { socket, closed };
}

function assertReaped(closed: Closed): void {
  assert.ok(closed.ms <= HEADERS_MS + SLACK_MS, `closed after ${Math.round(closed.ms)} ms, the headers timeout is ${HEADERS_MS} ms`);
  assert.ok(closed.data === "" || /^HTTP\/1\.1 408 /.test(closed.data), `answered ${JSON.stringify(closed.data.slice(0, 40))}`);
}

const listeners = [
  { name: "API host", tls: false, port: () => clear.apiPort },
  { name: "registry host", tls: false, port: () => clear.registryPort },
  { name: "metrics listener", tls: false, port: () => clear.metricsPort },
  { name: "API host over TLS", tls: true, port: () => secure.apiPort },
  { name: "registry host over TLS", tls: true, port: () => secure.registryPort },
];

for (const listener of listeners) {
  describe(`the ${listener.name}`, { concurrency: true }, () => {
    test("a head that stops before its blank line is closed within the headers timeout", BOUNDED, async () => {
      assertReaped(await (await slowHead(listener.port(), { tls: listener.tls, head: STOPPED_HEAD })).closed);
    });

    test("a head that trickles a line every 200 ms is closed within the headers timeout", BOUNDED, async () => {
      assertReaped(await (await slowHead(listener.port(), { tls: listener.tls, head: STOPPED_HEAD, trickleMs: 200 })).closed);
    });

    test("a head that trickles a byte every 100 ms is closed within the headers timeout", BOUNDED, async () => {
      const head = STOPPED_HEAD;
      const socket = await slowHead(listener.port(), { tls: listener.tls });
      let i = 0;
      const drip = setInterval(() => socket.socket.writable && socket.socket.write(head[i++ % head.length]), 100);
      const closed = await socket.closed;
      clearInterval(drip);
      assertReaped(closed);
    });

    test("a connection that sends nothing is closed within the headers timeout", BOUNDED, async () => {
      assertReaped(await (await slowHead(listener.port(), { tls: listener.tls })).closed);
    });
  });
}

describe("a thousand slow heads", () => {
  test("do not delay other clients, and are all reaped", { timeout: 60_000 }, async () => {
    const held = await Promise.all(Array.from({ length: 1000 }, () => slowHead(clear.apiPort, { head: STOPPED_HEAD, tls: false })));
    const latencies: number[] = [];
    while (latencies.length < 10) {
      const started = performance.now();
      const res = await fetch(`${clear.apiUrl}/ping/v2/ping`, { headers: { connection: "close" } });
      assert.equal(res.status, 200);
      await res.arrayBuffer();
      latencies.push(performance.now() - started);
    }
    const median = [...latencies].sort((a, b) => a - b)[latencies.length >> 1];
    assert.ok(median < 500, `latencies ${latencies.map(Math.round).join(", ")} ms`);
    const closed = await Promise.all(held.map((h) => h.closed));
    const slowest = Math.max(...closed.map((c) => c.ms));
    assert.ok(slowest <= HEADERS_MS + SLACK_MS + 1000, `the last slow head closed after ${Math.round(slowest)} ms`);
  });

  test("count against the connection limit until they are reaped, on every listener", { timeout: 30_000 }, async () => {
    const LIMIT = 20;
    const limited = await startTestServer({ logLevel: "silent", limits: { headersTimeoutMs: HEADERS_MS, maxConnections: LIMIT } });
    try {
      for (const port of [limited.apiPort, limited.registryPort, limited.metricsPort]) {
        const held = await Promise.all(Array.from({ length: LIMIT }, () => slowHead(port, { head: STOPPED_HEAD, tls: false })));
        // Beyond the limit a connection is closed at once, unanswered.
        const refused = await slowHead(port, { head: "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n", tls: false });
        const out = await refused.closed;
        assert.ok(out.ms < HEADERS_MS && !out.data.startsWith("HTTP/1.1 200"), `port ${port}: a connection beyond the limit was ${JSON.stringify(out.data.slice(0, 20))} after ${Math.round(out.ms)} ms`);
        for (const closed of await Promise.all(held.map((h) => h.closed))) assertReaped(closed);
        // Reaped, they make room: a client is served again.
        await new Promise((resolve) => setTimeout(resolve, 100));
        const res = await fetch(`http://127.0.0.1:${port}/${port === limited.metricsPort ? "metrics" : "healthz"}`);
        assert.equal(res.status, 200);
        await res.arrayBuffer();
      }
    } finally {
      await limited.close();
    }
  });
});
