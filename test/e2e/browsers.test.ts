import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { startTestServer, type TestServer } from "../support/test-server.js";

const ORIGIN = "https://app.example.com";
const PING = "/platform.ping.v2.PingService/Ping";

let open: TestServer;
let closed: TestServer;
before(async () => {
  [open, closed] = await Promise.all([startTestServer({ corsOrigins: [ORIGIN] }), startTestServer()]);
});
after(async () => {
  await Promise.all([open.close(), closed.close()]);
});

function preflight(server: TestServer, path: string, method: string, headers: string, origin = ORIGIN): Promise<Response> {
  return fetch(`${server.apiUrl}${path}`, {
    method: "OPTIONS",
    headers: { origin, "access-control-request-method": method, "access-control-request-headers": headers },
  });
}

const list = (value: string | null) => (value ?? "").split(",").map((s) => s.trim().toLowerCase());

describe("CORS with an allowed origin", () => {
  test("a Connect preflight allows POST and the Connect headers, the credential and the request id", async () => {
    const res = await preflight(open, PING, "POST", "content-type,connect-protocol-version,connect-timeout-ms,authorization,x-request-id");
    assert.equal(res.status, 204);
    assert.equal(res.headers.get("access-control-allow-origin"), ORIGIN);
    assert.ok(list(res.headers.get("access-control-allow-methods")).includes("post"));
    for (const h of ["content-type", "connect-protocol-version", "connect-timeout-ms", "authorization", "x-request-id"]) {
      assert.ok(list(res.headers.get("access-control-allow-headers")).includes(h), h);
    }
    assert.ok(Number(res.headers.get("access-control-max-age")) > 0);
    assert.match(res.headers.get("vary") ?? "", /origin/i);
  });

  test("a gRPC-Web preflight allows its headers; the answer exposes grpc-status, grpc-message and the details", async () => {
    const res = await preflight(open, PING, "POST", "content-type,x-grpc-web,x-user-agent,grpc-timeout");
    assert.equal(res.status, 204);
    for (const h of ["x-grpc-web", "x-user-agent", "grpc-timeout"]) assert.ok(list(res.headers.get("access-control-allow-headers")).includes(h), h);
    // The call itself, as a browser's gRPC-Web client sends it: an empty Ping request, one frame.
    const call = await fetch(`${open.apiUrl}${PING}`, {
      method: "POST",
      headers: { origin: ORIGIN, "content-type": "application/grpc-web+proto", "x-grpc-web": "1" },
      body: new Uint8Array([0, 0, 0, 0, 0]),
    });
    assert.equal(call.status, 200);
    await call.arrayBuffer();
    assert.equal(call.headers.get("access-control-allow-origin"), ORIGIN);
    for (const h of ["grpc-status", "grpc-message", "grpc-status-details-bin", "x-request-id"]) {
      assert.ok(list(call.headers.get("access-control-expose-headers")).includes(h), h);
    }
  });

  test("a REST preflight allows PATCH and DELETE; a REST answer carries the origin", async () => {
    const res = await preflight(open, `/iam/v2/groups/${open.org.uid}`, "PATCH", "content-type,authorization");
    assert.equal(res.status, 204);
    assert.ok(list(res.headers.get("access-control-allow-methods")).includes("patch"));
    assert.ok(list(res.headers.get("access-control-allow-methods")).includes("delete"));
    const get = await fetch(`${open.apiUrl}/iam/v2/groups/${open.org.uid}`, { headers: { origin: ORIGIN, authorization: `Bearer ${open.ownerToken}` } });
    assert.equal(get.status, 200);
    assert.equal(get.headers.get("access-control-allow-origin"), ORIGIN);
  });

  test("a Connect call carries the origin; a call without Origin gets no CORS headers", async () => {
    const connect = await fetch(`${open.apiUrl}${PING}`, { method: "POST", headers: { origin: ORIGIN, "content-type": "application/json" }, body: "{}" });
    assert.deepEqual(await connect.json(), { response: "pong" });
    assert.equal(connect.headers.get("access-control-allow-origin"), ORIGIN);
    const plain = await fetch(`${open.apiUrl}${PING}`, { method: "POST", headers: { "content-type": "application/json" }, body: "{}" });
    await plain.arrayBuffer();
    assert.equal(plain.headers.get("access-control-allow-origin"), null);
  });

  test("another origin's preflight is refused 403 with a Status naming it, and its calls get no CORS headers", async () => {
    const res = await preflight(open, PING, "POST", "content-type", "https://evil.example");
    assert.equal(res.status, 403);
    assert.equal(res.headers.get("access-control-allow-origin"), null);
    const status = (await res.json()) as { code: number; message: string; details: Array<Record<string, unknown>> };
    assert.equal(status.code, 7);
    assert.match(status.message, /evil\.example/);
    assert.equal(status.details[0].reason, "CORS_ORIGIN_NOT_ALLOWED");
    const call = await fetch(`${open.apiUrl}${PING}`, { method: "POST", headers: { origin: "https://evil.example", "content-type": "application/json" }, body: "{}" });
    await call.arrayBuffer();
    assert.equal(call.headers.get("access-control-allow-origin"), null);
  });
});

describe("CORS by default", () => {
  test("no origin is allowed: no preflight is granted and answers carry no CORS headers", async () => {
    const res = await preflight(closed, PING, "POST", "content-type");
    await res.arrayBuffer();
    assert.notEqual(res.status, 204);
    assert.equal(res.headers.get("access-control-allow-origin"), null);
    const call = await fetch(`${closed.apiUrl}/ping/v2/ping`, { headers: { origin: ORIGIN } });
    assert.equal(call.status, 200);
    await call.arrayBuffer();
    assert.equal(call.headers.get("access-control-allow-origin"), null);
  });
});

describe("WWW-Authenticate on REST 401s (RFC 6750)", () => {
  const path = () => `/iam/v2/groups/${closed.org.uid}`;

  test("no credential: a Bearer challenge with the realm and no error code", async () => {
    const res = await fetch(`${closed.apiUrl}${path()}`);
    assert.equal(res.status, 401);
    assert.equal(res.headers.get("www-authenticate"), 'Bearer realm="api.test"');
  });

  test("a refused token: error=invalid_token with a description", async () => {
    const res = await fetch(`${closed.apiUrl}${path()}`, { headers: { authorization: "Bearer not.a.token" } });
    assert.equal(res.status, 401);
    assert.match(res.headers.get("www-authenticate") ?? "", /^Bearer realm="api\.test", error="invalid_token", error_description="[^"]+"$/);
  });

  test("a credential that is not a bearer token: error=invalid_request", async () => {
    const res = await fetch(`${closed.apiUrl}${path()}`, { headers: { authorization: "Basic dXNlcjpwYXNz" } });
    assert.equal(res.status, 401);
    assert.match(res.headers.get("www-authenticate") ?? "", /^Bearer realm="api\.test", error="invalid_request"/);
  });

  test("other errors carry no challenge", async () => {
    const res = await fetch(`${closed.apiUrl}/iam/v2/groups/${closed.org.uid}/0123456789abcdef`, { headers: { authorization: `Bearer ${closed.ownerToken}` } });
    assert.equal(res.status, 404);
    assert.equal(res.headers.get("www-authenticate"), null);
  });
});
