// gRPC's Status-Message rule: `grpc-message` percent-encodes only the bytes outside 0x20-0x7E and
// `%` itself. connect-es encodes every URI-reserved character (`:` as `%3A`), which @grpc/grpc-js
// shows its users verbatim; both gRPC paths (the direct unary path and connect-es's adapter, here
// reached by a compressed request) must answer the spec's encoding.
import assert from "node:assert/strict";
import http2 from "node:http2";
import { gzipSync } from "node:zlib";
import { after, before, test } from "node:test";
import { create, toBinary } from "@bufbuild/protobuf";
import { GetGroupRequestSchema, GroupsService } from "../../gen/platform/iam/v2/groups_service_pb.js";
import { encodeGrpcMessage } from "../../src/transport/rpc/grpc-message.js";
import { startTestServer, type TestServer } from "../support/test-server.js";

let server: TestServer;
before(async () => {
  server = await startTestServer({ logLevel: "error" });
});
after(async () => {
  await server.close();
});

/** A GetGroup whose uid is invalid (the message has `:` in it), as one gRPC call; its trailers. */
function trailersOf(compressed: boolean): Promise<http2.IncomingHttpHeaders> {
  const message = toBinary(GetGroupRequestSchema, create(GetGroupRequestSchema, { uid: "not a uid" }));
  const payload = compressed ? gzipSync(message) : Buffer.from(message);
  const frame = Buffer.alloc(5 + payload.length);
  frame[0] = compressed ? 1 : 0;
  frame.writeUInt32BE(payload.length, 1);
  frame.set(payload, 5);
  const session = http2.connect(`http://127.0.0.1:${server.apiPort}`);
  return new Promise((resolve, reject) => {
    const stream = session.request({
      ":method": "POST",
      ":path": `/${GroupsService.typeName}/${GroupsService.method.getGroup.name}`,
      "content-type": "application/grpc",
      te: "trailers",
      authorization: `Bearer ${server.ownerToken}`,
      ...(compressed ? { "grpc-encoding": "gzip" } : {}),
    });
    let headers: http2.IncomingHttpHeaders = {};
    stream.on("response", (h) => (headers = h));
    stream.on("trailers", (t) => (headers = { ...headers, ...t }));
    stream.on("data", () => {});
    stream.on("end", () => {
      session.close();
      resolve(headers);
    });
    stream.on("error", reject);
    stream.end(frame);
  });
}

for (const [path, compressed] of [["the direct unary path", false], ["connect-es's adapter (a compressed request)", true]] as const) {
  test(`grpc-message on ${path}: printable ASCII such as ':' and ' ' goes out as it is`, async () => {
    const headers = await trailersOf(compressed);
    assert.equal(headers["grpc-status"], "3");
    const raw = String(headers["grpc-message"]);
    assert.equal(raw, "Invalid argument: uid: is not a valid uid for this call");
  });
}

test("encodeGrpcMessage: '%' and every byte outside 0x20-0x7E as %XX of its UTF-8, the rest as it is", () => {
  assert.equal(encodeGrpcMessage("50% done: café\n"), "50%25 done: caf%C3%A9%0A");
});
