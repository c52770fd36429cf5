import assert from "node:assert/strict";
import http2 from "node:http2";
import net from "node:net";
import { after, before, describe, test } from "node:test";
import { startTestServer, type TestServer } from "../support/test-server.js";

/**
 * Once a request is answered before its body ended (a 401 to an unauthenticated upload, a
 * refusal), an HTTP/2 stream is reset at once (NO_ERROR: the rest of the body is not wanted) and
 * an HTTP/1.1 connection is closed unless the rest of the body comes within the headers timeout,
 * so a client that never finishes its body holds no stream or connection slot until the registry's
 * long request timeout (meant for large uploads) runs out.
 */
const SLOTS = 8;
const HEADERS_MS = 1000;
/** Node checks on an interval, and a loaded machine fires timers late. */
const SLACK_MS = 3000;

let server: TestServer;

before(async () => {
  server = await startTestServer({
    logLevel: "silent",
    limits: { maxConnections: SLOTS, registryRequestTimeoutMs: 3_600_000, requestTimeoutMs: 3_600_000, idleTimeoutMs: 3_600_000, headersTimeoutMs: HEADERS_MS, keepAliveTimeoutMs: 30_000 },
  });
});

after(() => server.close());

/** An h2 session holding one unauthenticated upload whose body never ends; resolves when its answer came. */
async function h2Abandoned(port: number): Promise<{ session: http2.ClientHttp2Session; status: number; closed: Promise<void> }> {
  const session = http2.connect(`http://127.0.0.1:${port}`);
  session.on("error", () => {});
  const stream = session.request({ ":method": "POST", ":path": "/v2/acme/app/blobs/uploads/", "content-type": "application/octet-stream" });
  stream.on("error", () => {});
  stream.write(Buffer.alloc(100));
  const status = await new Promise<number>((resolve) => stream.once("response", (h) => resolve(Number(h[":status"]))));
  stream.resume();
  const closed = new Promise<void>((resolve) => (stream.closed ? resolve() : stream.once("close", () => resolve())));
  return { session, status, closed };
}

/** An HTTP/1.1 connection holding one unauthenticated upload whose body never ends; resolves when the server closes it. */
async function h1Abandoned(port: number): Promise<{ answer: string; closed: Promise<void> }> {
  const socket = net.connect(port, "127.0.0.1");
  socket.on("error", () => {});
  await new Promise((resolve) => socket.once("connect", resolve));
  let answer = "";
  socket.on("data", (chunk) => (answer += chunk.toString("latin1")));
  const closed = new Promise<void>((resolve) => socket.once("close", () => resolve()));
  socket.write("POST /v2/acme/app/blobs/uploads/ HTTP/1.1\r\nHost: x\r\nContent-Type: application/octet-stream\r\nContent-Length: 1000000\r\n\r\n0123456789");
  await new Promise((resolve) => setTimeout(resolve, 300));
  return { answer, closed };
}

const within = <T>(promise: Promise<T>, ms: number, what: string) =>
  Promise.race([promise, new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`${what} still open after ${ms} ms`)), ms))]);

describe("answers sent before the request body ended", () => {
  test("HTTP/2: the stream is reset at its answer, and sessions that held one let new clients in", { timeout: 20_000 }, async () => {
    const held = await Promise.all(Array.from({ length: SLOTS }, () => h2Abandoned(server.registryPort)));
    for (const h of held) assert.equal(h.status, 401);
    await within(Promise.all(held.map((h) => h.closed)), SLACK_MS, "an answered stream");
    // The sessions stay open (they are kept alive), but hold no stream: closing them frees their slots for others.
    for (const h of held) h.session.close();
    await new Promise((resolve) => setTimeout(resolve, 200));
    const res = await fetch(`${server.registryUrl}/v2/`);
    assert.equal(res.status, 401);
  });

  test("HTTP/1.1: the connection is closed after the headers timeout", { timeout: 20_000 }, async () => {
    for (const port of [server.registryPort, server.apiPort]) {
      const held = await Promise.all(Array.from({ length: SLOTS - 1 }, () => h1Abandoned(port)));
      for (const h of held) assert.match(h.answer, /^HTTP\/1\.1 (401|40\d) /);
      await within(Promise.all(held.map((h) => h.closed)), HEADERS_MS + SLACK_MS, "an answered connection");
    }
    const res = await fetch(`${server.registryUrl}/v2/`);
    assert.equal(res.status, 401);
  });
});
