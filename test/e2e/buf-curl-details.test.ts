import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { bufCurl, bufCurlError, bufCurlSkip, bufDecodeDetail } from "../support/buf-curl.js";
import { startTestServer, type TestServer } from "../support/test-server.js";

/**
 * A failed call's error details decoded with nothing but buf and the server's reflection: every
 * detail type the server sends (google/rpc/error_details.proto) and google.rpc.Status resolve by
 * `file_containing_symbol`, with their imports.
 */
let server: TestServer;
let api: string;
before(async () => {
  server = await startTestServer({ errorDomain: "platform.example" });
  api = `http://127.0.0.1:${server.apiPort}`;
});
after(() => server.close());

describe("error details through buf and server reflection", { skip: bufCurlSkip }, () => {
  const auth = () => ["-H", `Authorization: Bearer ${server.ownerToken}`];

  test("a NOT_FOUND's ErrorInfo (reason, domain) and ResourceInfo", async () => {
    const missing = `${server.org.uid}/0123456789abcdef`;
    const error = await bufCurlError("--protocol", "grpc", ...auth(), "-d", JSON.stringify({ uid: missing }), `${api}/platform.iam.v2.GroupsService/GetGroup`);
    assert.equal(error.code, "not_found");
    assert.deepEqual(error.details.map((d) => d.type), ["google.rpc.ErrorInfo", "google.rpc.ResourceInfo"]);
    assert.deepEqual(await bufDecodeDetail(api, error.details[0]), { reason: "NOT_FOUND", domain: "platform.example" });
    const resource = await bufDecodeDetail(api, error.details[1]);
    assert.equal(resource.resourceType, "group");
    assert.equal(resource.resourceName, missing);
  });

  test("an INVALID_ARGUMENT's ErrorInfo and BadRequest", async () => {
    const error = await bufCurlError("--protocol", "grpc", ...auth(), "-d", JSON.stringify({ parent: server.org.uid, group: { name: "" } }), `${api}/platform.iam.v2.GroupsService/CreateGroup`);
    assert.equal(error.code, "invalid_argument");
    const decoded = await Promise.all(error.details.map((d) => bufDecodeDetail(api, d)));
    assert.deepEqual(decoded[0], { reason: "INVALID_ARGUMENT", domain: "platform.example" });
    assert.deepEqual(((decoded[1].fieldViolations as { field: string }[]) ?? []).map((v) => v.field), ["group.name"]);
  });

  test("every error detail type and google.rpc.Status resolve by symbol, with their imports", async () => {
    for (const type of ["google.rpc.ErrorInfo", "google.rpc.BadRequest", "google.rpc.PreconditionFailure", "google.rpc.ResourceInfo", "google.rpc.RetryInfo", "google.rpc.Status"]) {
      const answer = JSON.parse(await bufCurl("--protocol", "grpc", "-d", JSON.stringify({ fileContainingSymbol: type }), `${api}/grpc.reflection.v1.ServerReflection/ServerReflectionInfo`)) as {
        fileDescriptorResponse?: { fileDescriptorProto: string[] };
      };
      assert.ok((answer.fileDescriptorResponse?.fileDescriptorProto.length ?? 0) >= 2, `${type}: its file and the files it imports`);
    }
  });
});
