// The request headers a call hands its handler (`requestHeaders`): the policy per wire, and the
// same answers whether they are read before the copy into `Headers` (get, has) or after it.
import assert from "node:assert/strict";
import { test } from "node:test";
import { requestHeaders, type Wire } from "../../src/transport/rpc/headers.js";

const incoming = {
  ":method": "POST",
  ":path": "/platform.iam.v2.Groups/GetGroup",
  host: "api.test",
  "content-type": "application/grpc",
  "content-length": "12",
  te: "trailers",
  "grpc-timeout": "5S",
  "connect-timeout-ms": "5000",
  authorization: "Bearer abc",
  "x-request-id": "  r-1 ",
  "x-lead": "\n\tr-2",
  "x-tail": "r-3\r\t",
  "x-empty": "",
  "x-many": ["a", "b"],
  "user-agent": "grpc-node-js/1.14",
} as unknown as Record<string, string | string[] | undefined>;

const NAMES = [...Object.keys(incoming), "connect-protocol-version", "absent", "Authorization", "X-Request-Id", "constructor", "toString"];

/** What every name answers, read before the copy (`get`, `has`), and the headers in order once copied. */
function observe(wire: Wire) {
  const headers = requestHeaders(incoming, wire);
  const before = NAMES.filter((n) => !n.startsWith(":")).map((name) => [name, headers.get(name), headers.has(name)]);
  const copied = [...headers];
  const after = NAMES.filter((n) => !n.startsWith(":")).map((name) => [name, headers.get(name), headers.has(name)]);
  return { before, after, copied: Object.fromEntries(copied) };
}

for (const wire of ["grpc", "connect", "rest"] as const) {
  test(`${wire}: a header read before the copy answers as it does after it`, () => {
    const { before, after } = observe(wire);
    assert.deepEqual(before, after);
  });
}

test("grpc: every header but pseudo-headers, its content type as connect-es names it", () => {
  const { copied } = observe("grpc");
  assert.deepEqual(copied, {
    authorization: "Bearer abc",
    "connect-timeout-ms": "5000",
    "content-length": "12",
    "content-type": "application/grpc+proto",
    "grpc-timeout": "5S",
    host: "api.test",
    te: "trailers",
    "user-agent": "grpc-node-js/1.14",
    "x-empty": "",
    "x-lead": "r-2",
    "x-many": "a, b",
    "x-request-id": "r-1",
    "x-tail": "r-3",
  });
});

test("rest: the caller's own headers, then Connect unary's, the caller's timeout kept", () => {
  const { copied } = observe("rest");
  assert.deepEqual(copied, {
    authorization: "Bearer abc",
    "connect-protocol-version": "1",
    "connect-timeout-ms": "5000",
    "content-type": "application/proto",
    "user-agent": "grpc-node-js/1.14",
    "x-empty": "",
    "x-lead": "r-2",
    "x-many": "a, b",
    "x-request-id": "r-1",
    "x-tail": "r-3",
  });
});

test("a change copies first: the handler's headers are the request's and its change", () => {
  const headers = requestHeaders(incoming, "connect");
  assert.equal(headers.get("authorization"), "Bearer abc");
  headers.set("x-added", "1");
  headers.delete("authorization");
  assert.equal(headers.get("x-added"), "1");
  assert.equal(headers.get("authorization"), null);
  assert.equal(headers.get("grpc-timeout"), "5S");
  assert.deepEqual(new Headers(requestHeaders(incoming, "grpc")).get("content-type"), "application/grpc+proto", "copied by new Headers(...)");
});
