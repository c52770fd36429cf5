import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { bufCurl, bufCurlSkip } from "../support/buf-curl.js";
import { startSystemServer, type SystemServer } from "./system-server.js";


let server: SystemServer;
before(async () => {
  server = await startSystemServer();
});
after(() => server.close());

const curl = bufCurl;

describe("buf curl without a schema file", { skip: bufCurlSkip }, () => {
  test("calls Ping over gRPC using reflection v1", async () => {
    const out = await curl(
      "--protocol",
      "grpc",
      `http://127.0.0.1:${server.port}/platform.ping.v2.PingService/Ping`,
      "-d",
      "{}",
    );
    assert.deepEqual(JSON.parse(out), { response: "pong" });
  });

  test("calls Ping using reflection v1alpha", async () => {
    const out = await curl(
      "--protocol",
      "grpc",
      "--reflect-protocol",
      "grpc-v1alpha",
      `http://127.0.0.1:${server.port}/platform.ping.v2.PingService/Ping`,
      "-d",
      "{}",
    );
    assert.deepEqual(JSON.parse(out), { response: "pong" });
  });

  test("resolves every listed service, GroupsService included", async () => {
    const out = await curl("--list-methods", `http://127.0.0.1:${server.port}`);
    const methods = out.trim().split("\n");
    assert.ok(methods.includes("platform.iam.v2.GroupsService/GetGroup"), out);
    assert.ok(methods.includes("grpc.health.v1.Health/Watch"), out);
  });
});
