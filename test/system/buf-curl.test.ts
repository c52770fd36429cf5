import assert from "node:assert/strict";
import { execFile, spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { after, before, describe, test } from "node:test";
import { startSystemServer, type SystemServer } from "./system-server.js";

// buf curl resolves schemas with Go's protodesc, a stricter and independent reader of what
// reflection serves. It ships in the @bufbuild/buf devDependency and runs offline.
const buf = fileURLToPath(new URL("../../node_modules/.bin/buf", import.meta.url));
const bufWorks = spawnSync(buf, ["curl", "--help"]).status === 0;
const run = promisify(execFile);

let server: SystemServer;
before(async () => {
  server = await startSystemServer();
});
after(() => server.close());

const curl = async (...args: string[]): Promise<string> =>
  (await run(buf, ["curl", "--http2-prior-knowledge", ...args], { timeout: 30_000 })).stdout;

describe("buf curl without a schema file", { skip: !bufWorks && "buf curl is not runnable" }, () => {
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
