import assert from "node:assert/strict";
import http2 from "node:http2";
import { after, before, describe, test } from "node:test";
import { create, toBinary } from "@bufbuild/protobuf";
import { GetGroupRequestSchema } from "../../gen/platform/iam/v2/groups_service_pb.js";
import { bufCurl, bufCurlSkip } from "../support/buf-curl.js";
import { startTestServer, type TestServer } from "../support/test-server.js";

/**
 * Standard clients send a deadline with every call (`grpc-timeout`: grpc-go contexts, grpc-js
 * `deadline`, Envoy route timeouts, `buf curl --timeout`; `connect-timeout-ms`): it bounds the call,
 * it is never a reason to refuse it, on every path that serves unary calls.
 */
const PATH = "/platform.iam.v2.GroupsService/GetGroup";

let server: TestServer;
let session: http2.ClientHttp2Session;

before(async () => {
  server = await startTestServer({ logLevel: "silent" });
  session = http2.connect(server.apiUrl);
});

after(async () => {
  session.close();
  await server.close();
});

const framed = (bytes: Uint8Array) => {
  const out = Buffer.alloc(5 + bytes.length);
  out.writeUInt32BE(bytes.length, 1);
  out.set(bytes, 5);
  return out;
};

/** A raw gRPC GetGroup over h2c with `grpc-timeout` (the unary path the server answers before the adapter). */
function grpcCall(timeout: string, bodyAfterMs = 0): Promise<{ status: string; message: string }> {
  const body = framed(toBinary(GetGroupRequestSchema, create(GetGroupRequestSchema, { uid: server.org.uid })));
  return new Promise((resolve, reject) => {
    const stream = session.request({
      ":method": "POST",
      ":path": PATH,
      "content-type": "application/grpc",
      te: "trailers",
      "grpc-timeout": timeout,
      authorization: `Bearer ${server.ownerToken}`,
    });
    let headers: http2.IncomingHttpHeaders = {};
    stream.on("response", (h) => (headers = h));
    stream.on("trailers", (t) => (headers = { ...headers, ...t }));
    stream.on("data", () => {});
    stream.on("error", reject);
    stream.on("close", () => resolve({ status: String(headers["grpc-status"]), message: decodeURIComponent(String(headers["grpc-message"] ?? "")) }));
    setTimeout(() => stream.end(body), bodyAfterMs);
  });
}

describe("calls with a deadline", () => {
  test("gRPC: any grpc-timeout unit is served; one spent before the body arrived is DEADLINE_EXCEEDED; a malformed one INVALID_ARGUMENT", async () => {
    for (const timeout of ["10S", "9923m", "1M", "1H", "99999999H", "30000000u"]) {
      const out = await grpcCall(timeout);
      assert.equal(out.status, "0", `${timeout}: ${out.message}`);
    }
    assert.equal((await grpcCall("50m", 300)).status, "4", "the deadline counts from the request's arrival");
    assert.equal((await grpcCall("ten seconds")).status, "3");
  });

  test("Connect and gRPC-Web take connect-timeout-ms and grpc-timeout", async () => {
    const json = await fetch(`${server.apiUrl}${PATH}`, {
      method: "POST",
      headers: { "content-type": "application/json", "connect-timeout-ms": "10000", authorization: `Bearer ${server.ownerToken}` },
      body: JSON.stringify({ uid: server.org.uid }),
    });
    assert.equal(json.status, 200, await json.text());
    const web = await fetch(`${server.apiUrl}${PATH}`, {
      method: "POST",
      headers: { "content-type": "application/grpc-web+proto", "x-grpc-web": "1", "grpc-timeout": "10S", authorization: `Bearer ${server.ownerToken}` },
      body: framed(toBinary(GetGroupRequestSchema, create(GetGroupRequestSchema, { uid: server.org.uid }))),
    });
    assert.equal(web.status, 200);
    assert.equal(web.headers.get("grpc-status"), null, "no trailers-only error");
    assert.match(Buffer.from(await web.arrayBuffer()).toString("latin1"), /grpc-status:\s*0/);
  });

  test("REST takes connect-timeout-ms too", async () => {
    const res = await fetch(`${server.apiUrl}/iam/v2/groups/${server.org.uid}`, { headers: { "connect-timeout-ms": "10000", authorization: `Bearer ${server.ownerToken}` } });
    assert.equal(res.status, 200, await res.text());
  });

  test("buf curl --timeout 10s over gRPC", { skip: bufCurlSkip }, async () => {
    const out = await bufCurl("--protocol", "grpc", "--timeout", "10s", "-d", "{}", `${server.apiUrl}/platform.ping.v2.PingService/Ping`);
    assert.deepEqual(JSON.parse(out), { response: "pong" });
  });
});
