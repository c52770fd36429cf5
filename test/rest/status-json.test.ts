import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { createRegistry } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import { ErrorInfoSchema, file_google_rpc_error_details } from "../../gen/google/rpc/error_details_pb.js";
import { GroupSchema } from "../../gen/platform/iam/v2/group_pb.js";
import type { NodeResponse } from "../../src/transport/http/node-types.js";
import { httpStatusFromCode, sendStatus, statusJson } from "../../src/transport/http/status-json.js";

describe("status JSON", () => {
  it("maps gRPC codes to HTTP statuses", () => {
    const want = [200, 499, 500, 400, 504, 404, 409, 403, 429, 400, 409, 400, 501, 500, 503, 500, 401];
    assert.deepEqual(want.map((_, code) => httpStatusFromCode(code)), want);
    assert.equal(httpStatusFromCode(99), 500);
  });

  it("writes outgoing and incoming details with @type first, skipping unknown or broken ones; an ErrorInfo without a domain gets the target's", () => {
    const error = new ConnectError("boom", Code.FailedPrecondition, undefined, [
      { desc: ErrorInfoSchema, value: { reason: "FAILED_PRECONDITION", domain: "platform-api" } },
      { desc: GroupSchema, value: { uid: "not in registry" } },
    ]);
    error.details.push({ type: "google.rpc.ErrorInfo", value: new Uint8Array([0x0a, 0x01, 0x58]) });
    error.details.push({ type: "google.rpc.ErrorInfo", value: new Uint8Array([0xff, 0xff]) });
    error.details.push({ type: "unknown.Type", value: new Uint8Array() });
    const json = JSON.parse(statusJson(error, { registry: createRegistry(file_google_rpc_error_details), domain: "api.example.com" }));
    assert.deepEqual(json, {
      code: 9,
      message: "boom",
      details: [
        { "@type": "type.googleapis.com/google.rpc.ErrorInfo", reason: "FAILED_PRECONDITION", domain: "platform-api" },
        { "@type": "type.googleapis.com/google.rpc.ErrorInfo", reason: "X", domain: "api.example.com" },
      ],
    });
    assert.equal(Object.keys(json.details[0])[0], "@type");
  });

  it("sendStatus answers a plain route with one ErrorInfo named after the code", () => {
    let head: [number, Record<string, string>] | undefined;
    let body = "";
    const res = {
      destroyed: false,
      writeHead: (status: number, headers: Record<string, string>) => (head = [status, headers]),
      end: (b: Buffer) => (body = b.toString()),
    } as unknown as NodeResponse;
    sendStatus(res, 404, { code: 5, message: "Not found: no route for GET /x" }, "api.example.com");
    assert.equal(head?.[0], 404);
    assert.equal(head?.[1]["content-type"], "application/json");
    assert.equal(head?.[1]["content-length"], String(Buffer.byteLength(body)));
    assert.deepEqual(JSON.parse(body), {
      code: 5,
      message: "Not found: no route for GET /x",
      details: [{ "@type": "type.googleapis.com/google.rpc.ErrorInfo", reason: "NOT_FOUND", domain: "api.example.com" }],
    });
  });
});
