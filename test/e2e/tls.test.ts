import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import https from "node:https";
import http2 from "node:http2";
import { tmpdir } from "node:os";
import { join } from "node:path";
import tls from "node:tls";
import { after, before, test } from "node:test";
import { promisify } from "node:util";
import { fromBinary, fromJson, toBinary, toJson, type JsonObject } from "@bufbuild/protobuf";
import { createClient } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import * as grpc from "@grpc/grpc-js";
import { PingService } from "../../gen/platform/ping/v2/ping_pb.js";
import { runCli, startChildServer, type ChildServer } from "../support/child-server.js";
import { inRepo } from "../support/repo.js";

/**
 * `serve --tls-cert --tls-key` through the real command line: both hosts speak TLS, HTTP/2 by
 * ALPN and HTTP/1.1 on the same port, to clients that verify the certificate (made here with
 * the openssl CLI); SIGHUP rereads the files without closing the listeners.
 */

const execFileAsync = promisify(execFile);
const dir = mkdtempSync(join(tmpdir(), "platform-api-tls-"));
const CERT = join(dir, "cert.pem");
const KEY = join(dir, "key.pem");

interface Certificate {
  cert: Buffer;
  key: Buffer;
  /** As tls's getPeerCertificate() gives it: colon-separated upper-case hex. */
  fingerprint256: string;
}

/** A self-signed P-256 certificate for localhost and 127.0.0.1, made by openssl. */
async function makeCertificate(name: string): Promise<Certificate> {
  const cert = join(dir, `${name}.crt`);
  const key = join(dir, `${name}.key`);
  await execFileAsync("openssl", [
    ...["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-days", "2"],
    ...["-keyout", key, "-out", cert, "-subj", `/CN=${name}`, "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1"],
  ]);
  const { stdout } = await execFileAsync("openssl", ["x509", "-in", cert, "-noout", "-fingerprint", "-sha256"]);
  return { cert: readFileSync(cert), key: readFileSync(key), fingerprint256: stdout.trim().split("=")[1] };
}

let first: Certificate;
let second: Certificate;
let server: ChildServer;
/** Both certificates: a client trusting them sees which one the server presents. */
let ca: Buffer[];

before(async () => {
  [first, second] = await Promise.all([makeCertificate("first"), makeCertificate("second")]);
  ca = [first.cert, second.cert];
  writeFileSync(CERT, first.cert);
  writeFileSync(KEY, first.key);
  server = await startChildServer({ db: join(dir, "platform.db"), registryDir: join(dir, "registry"), logLevel: "info", args: ["--tls-cert", CERT, "--tls-key", KEY] });
});
after(async () => {
  server?.child.kill("SIGTERM");
  await server?.exit;
  rmSync(dir, { recursive: true, force: true });
});

/** One HTTPS/1.1 request on its own connection: status, body, negotiated protocol. */
function httpsGet(port: number, path: string, options: https.RequestOptions & { ALPNProtocols?: string[] } = {}): Promise<{ status: number; body: string; alpn: string | false | null }> {
  return new Promise((resolve, reject) => {
    const req = https.request({ host: "localhost", port, path, ca, agent: false, ...options }, (res) => {
      let body = "";
      res.on("data", (chunk: Buffer) => (body += chunk.toString()));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body, alpn: (res.socket as tls.TLSSocket).alpnProtocol }));
    });
    req.on("error", reject);
    req.end();
  });
}

/** One request over an HTTP/2 TLS session. */
function h2Get(session: http2.ClientHttp2Session, path: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const stream = session.request({ ":path": path });
    let status = 0;
    let body = "";
    stream.on("response", (headers) => (status = Number(headers[":status"])));
    stream.on("data", (chunk: Buffer) => (body += chunk.toString()));
    stream.on("end", () => resolve({ status, body }));
    stream.on("error", reject);
    stream.end();
  });
}

/** The fingerprint of the certificate a new connection to `port` is shown. */
function presented(port: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = tls.connect({ host: "127.0.0.1", port, servername: "localhost", ca }, () => {
      const fingerprint = socket.getPeerCertificate().fingerprint256;
      socket.end();
      resolve(fingerprint);
    });
    socket.on("error", reject);
  });
}

/** Ping over gRPC (grpc-js, TLS with our certificate as the only root). */
function grpcPing(port: number, roots: Buffer): Promise<JsonObject> {
  const client = new grpc.Client(`localhost:${port}`, grpc.credentials.createSsl(roots));
  const method = PingService.method.ping;
  return new Promise<JsonObject>((resolve, reject) => {
    client.makeUnaryRequest(
      `/${PingService.typeName}/Ping`,
      (json: JsonObject) => Buffer.from(toBinary(method.input, fromJson(method.input, json))),
      (bytes: Buffer) => toJson(method.output, fromBinary(method.output, bytes)) as JsonObject,
      {},
      (error, body) => (error ? reject(error) : resolve(body!)),
    );
  }).finally(() => client.close());
}

test("the banner and the log say https, and name the certificate", () => {
  assert.match(server.stderr(), /API on https:\/\/127\.0\.0\.1:\d+, registry on https:\/\/127\.0\.0\.1:\d+,/);
  const listening = server.stdout().split("\n").filter(Boolean).map((l) => JSON.parse(l) as Record<string, unknown>).find((l) => l.msg === "listening");
  assert.equal((listening?.tls as { subject: string }).subject, "CN=first");
});

test("the API port: gRPC (grpc-js), Connect over HTTP/2 and REST over HTTP/1.1, each verifying the certificate", async () => {
  assert.deepEqual(await grpcPing(server.apiPort, first.cert), { response: "pong" });

  const transport = createConnectTransport({ baseUrl: `https://localhost:${server.apiPort}`, httpVersion: "2", nodeOptions: { ca } });
  assert.equal((await createClient(PingService, transport).ping({})).response, "pong");

  const rest = await httpsGet(server.apiPort, "/ping/v2/ping", { ALPNProtocols: ["http/1.1"] });
  assert.deepEqual([rest.status, JSON.parse(rest.body), rest.alpn], [200, { response: "pong" }, "http/1.1"]);
  // A client offering no ALPN at all (node's https by default) is served HTTP/1.1 too.
  const plain = await httpsGet(server.apiPort, "/ping/v2/ping");
  assert.deepEqual([plain.status, plain.alpn], [200, false]);
});

test("the registry port: HTTP/1.1 and HTTP/2 over TLS", async () => {
  const h1 = await httpsGet(server.registryPort, "/v2/", { ALPNProtocols: ["http/1.1"] });
  assert.equal(h1.status, 401, "the version check wants a token");
  assert.equal(h1.alpn, "http/1.1");
  const session = http2.connect(`https://localhost:${server.registryPort}`, { ca });
  try {
    assert.deepEqual(await h2Get(session, "/healthz"), { status: 200, body: "ok\n" });
    assert.equal(session.alpnProtocol, "h2");
    assert.equal((await h2Get(session, "/v2/")).status, 401);
  } finally {
    session.close();
  }
});

test("a client that does not trust the certificate is refused, and cleartext gets no HTTP answer", async () => {
  await assert.rejects(httpsGet(server.apiPort, "/healthz", { ca: undefined }), /self-signed certificate/);
  await assert.rejects(grpcPing(server.apiPort, second.cert), (e: grpc.ServiceError) => e.code === grpc.status.UNAVAILABLE);
  await assert.rejects(fetch(`http://127.0.0.1:${server.apiPort}/healthz`, { signal: AbortSignal.timeout(5000) }));
});

test("SIGHUP serves new connections the new certificate; the listener and open connections stay", async () => {
  assert.equal(await presented(server.apiPort), first.fingerprint256);
  const open = http2.connect(`https://localhost:${server.apiPort}`, { ca });
  assert.equal((await h2Get(open, "/healthz")).status, 200);

  // A certificate that fails to load is refused; the one in use stays.
  writeFileSync(KEY, "not a key");
  server.child.kill("SIGHUP");
  await waitForLog(/TLS certificate not reloaded/);
  assert.match(server.stdout(), /--tls-key .*: not a PEM private key/);
  assert.equal(await presented(server.registryPort), first.fingerprint256);

  copyFileSync(join(dir, "second.crt"), CERT);
  copyFileSync(join(dir, "second.key"), KEY);
  server.child.kill("SIGHUP");
  await waitForLog(/TLS certificate reloaded.*CN=second/);
  assert.equal(await presented(server.apiPort), second.fingerprint256);
  assert.equal(await presented(server.registryPort), second.fingerprint256);
  assert.deepEqual(await grpcPing(server.apiPort, second.cert), { response: "pong" });

  // The session opened before the reload still answers, on the old certificate.
  assert.equal((await h2Get(open, "/readyz")).status, 200);
  assert.equal((open.socket as tls.TLSSocket).getPeerCertificate().fingerprint256, first.fingerprint256);
  open.close();
});

test("the container's HEALTHCHECK command reaches /readyz over TLS when TLS_CERT is set", async () => {
  const healthcheck = inRepo("bin/healthcheck.js");
  await execFileAsync(process.execPath, [healthcheck], { env: { ...process.env, PORT: String(server.apiPort), TLS_CERT: CERT } });
  await assert.rejects(execFileAsync(process.execPath, [healthcheck], { env: { ...process.env, PORT: String(server.apiPort), TLS_CERT: "" } }), (e: { code: number }) => e.code === 1);
});

test("bad TLS options stop serve with one line and exit 2", async () => {
  const refused = (args: string[], message: RegExp) =>
    assert.rejects(runCli("serve", "--db", ":memory:", "--port", "0", "--registry-port", "0", ...args), (e: { code: number; stderr: string }) => {
      assert.equal(e.code, 2);
      assert.match(e.stderr, message);
      assert.equal(e.stderr.trim().split("\n").length, 1, e.stderr);
      return true;
    });
  await refused(["--tls-cert", CERT], /--tls-cert needs --tls-key/);
  await refused(["--tls-key", KEY], /--tls-key needs --tls-cert/);
  await refused(["--tls-cert", join(dir, "missing.pem"), "--tls-key", KEY], /--tls-cert .*missing\.pem: no such file/);
  await refused(["--tls-cert", KEY, "--tls-key", KEY], /--tls-cert .*: not a PEM certificate/);
  await refused(["--tls-cert", join(dir, "first.crt"), "--tls-key", join(dir, "second.key")], /--tls-key .*: does not match the certificate/);
});

async function waitForLog(pattern: RegExp): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!pattern.test(server.stdout())) {
    if (Date.now() > deadline) throw new Error(`no log line ${pattern} in:\n${server.stdout()}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
