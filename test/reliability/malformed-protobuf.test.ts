import assert from "node:assert/strict";
import http2 from "node:http2";
import { after, before, describe, test } from "node:test";
import { anyUnpack } from "@bufbuild/protobuf/wkt";
import { fromBinary, toBinary, create } from "@bufbuild/protobuf";
import { ErrorInfoSchema } from "../../gen/google/rpc/error_details_pb.js";
import { StatusSchema } from "../../gen/google/rpc/status_pb.js";
import { GetGroupRequestSchema } from "../../gen/platform/iam/v2/groups_service_pb.js";
import { startTestServer, type TestServer } from "../support/test-server.js";
import { detailRegistry } from "../support/wires.js";

/**
 * A request body that is not valid protobuf is INVALID_ARGUMENT (HTTP 400) with an
 * ErrorInfo, over gRPC, Connect (application/proto) and gRPC-Web alike.
 */
const PATH = "/platform.iam.v2.GroupsService/GetGroup";
/** GetGroupRequest is `string uid = 1`. */
const MALFORMED: Array<[string, number[]]> = [
  ["a truncated varint (the length of field 1)", [0x0a, 0x80]],
  ["an illegal wire type (7 on field 1)", [0x0f, 0x00]],
  ["invalid UTF-8 in a string field", [0x0a, 0x02, 0xff, 0xfe]],
];

let server: TestServer;
let session: http2.ClientHttp2Session;
let valid: Uint8Array;

before(async () => {
  server = await startTestServer({ logLevel: "silent" });
  session = http2.connect(server.apiUrl);
  valid = toBinary(GetGroupRequestSchema, create(GetGroupRequestSchema, { uid: server.org.uid }));
});

after(async () => {
  session.close();
  await server.close();
});

const framed = (bytes: Uint8Array, flags = 0) => {
  const out = Buffer.alloc(5 + bytes.length);
  out[0] = flags;
  out.writeUInt32BE(bytes.length, 1);
  out.set(bytes, 5);
  return out;
};

function reasonOfStatusBin(value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  const status = fromBinary(StatusSchema, Buffer.from(value, "base64"));
  const info = status.details.map((d) => anyUnpack(d, detailRegistry)).find((m) => m?.$typeName === ErrorInfoSchema.typeName);
  return (info as { reason?: string } | undefined)?.reason;
}

/** A raw gRPC call over h2c; the status from trailers (or a trailers-only answer). */
function grpcCall(body: Uint8Array): Promise<{ status: string; message: string; reason?: string }> {
  return new Promise((resolve, reject) => {
    const stream = session.request({
      ":method": "POST",
      ":path": PATH,
      "content-type": "application/grpc",
      te: "trailers",
      authorization: `Bearer ${server.ownerToken}`,
    });
    let headers: http2.IncomingHttpHeaders = {};
    stream.on("response", (h) => (headers = h));
    stream.on("trailers", (t) => (headers = { ...headers, ...t }));
    stream.on("data", () => {});
    stream.on("error", reject);
    stream.on("close", () =>
      resolve({
        status: String(headers["grpc-status"]),
        message: decodeURIComponent(String(headers["grpc-message"] ?? "")),
        reason: reasonOfStatusBin(headers["grpc-status-details-bin"] as string | undefined),
      }),
    );
    stream.end(framed(body));
  });
}

async function connectCall(body: Uint8Array): Promise<{ status: number; json: Record<string, unknown> }> {
  const res = await fetch(`${server.apiUrl}${PATH}`, {
    method: "POST",
    headers: { "content-type": "application/proto", "connect-protocol-version": "1", authorization: `Bearer ${server.ownerToken}` },
    body: new Uint8Array(body),
  });
  const bytes = Buffer.from(await res.arrayBuffer());
  return { status: res.status, json: res.headers.get("content-type")?.startsWith("application/json") ? (JSON.parse(bytes.toString()) as Record<string, unknown>) : {} };
}

async function grpcWebCall(body: Uint8Array): Promise<Record<string, string>> {
  const res = await fetch(`${server.apiUrl}${PATH}`, {
    method: "POST",
    headers: { "content-type": "application/grpc-web+proto", "x-grpc-web": "1", authorization: `Bearer ${server.ownerToken}` },
    body: framed(body),
  });
  const bytes = Buffer.from(await res.arrayBuffer());
  const trailer: Record<string, string> = {};
  for (let at = 0; at < bytes.length; ) {
    const length = bytes.readUInt32BE(at + 1);
    if (bytes[at] === 0x80) {
      for (const line of bytes.subarray(at + 5, at + 5 + length).toString().split("\r\n")) {
        const i = line.indexOf(":");
        if (i > 0) trailer[line.slice(0, i).trim().toLowerCase()] = line.slice(i + 1).trim();
      }
    }
    at += 5 + length;
  }
  return trailer;
}

describe("a well-formed binary request still succeeds", () => {
  test("over gRPC, Connect and gRPC-Web", async () => {
    assert.equal((await grpcCall(valid)).status, "0");
    assert.equal((await connectCall(valid)).status, 200);
    assert.equal((await grpcWebCall(valid))["grpc-status"], "0");
  });
});

for (const [name, bytes] of MALFORMED) {
  describe(`a request with ${name}`, () => {
    const body = new Uint8Array(bytes);

    test("is INVALID_ARGUMENT over gRPC", async () => {
      const out = await grpcCall(body);
      assert.equal(out.status, "3", out.message);
      assert.match(out.message, /^Invalid argument: the request is not a valid platform\.iam\.v2\.GetGroupRequest message/);
      assert.equal(out.reason, "INVALID_ARGUMENT");
    });

    test("is HTTP 400 invalid_argument over Connect (application/proto)", async () => {
      const out = await connectCall(body);
      assert.equal(out.status, 400);
      assert.equal(out.json.code, "invalid_argument");
      assert.match(String(out.json.message), /^Invalid argument: /);
      const details = out.json.details as Array<{ type: string }>;
      assert.deepEqual(details.map((d) => d.type), ["google.rpc.ErrorInfo"]);
    });

    test("is INVALID_ARGUMENT over gRPC-Web", async () => {
      const trailer = await grpcWebCall(body);
      assert.equal(trailer["grpc-status"], "3");
      assert.equal(reasonOfStatusBin(trailer["grpc-status-details-bin"]), "INVALID_ARGUMENT");
    });
  });
}
