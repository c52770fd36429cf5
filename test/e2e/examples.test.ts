import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { delimiter } from "node:path";
import { promisify } from "node:util";
import { after, before, describe, test } from "node:test";
import { bufCurlSkip } from "../support/buf-curl.js";
import { startTestServer, type TestServer } from "../support/test-server.js";
import { inRepo, ROOT } from "../support/repo.js";

/** The clients in examples/, each run as a user would, in a child process against a live server. */
const run = promisify(execFile);
const BIN = inRepo("node_modules/.bin");

let server: TestServer;
let env: NodeJS.ProcessEnv;
before(async () => {
  // The google/api and google/rpc files the protos import (proto-deps/), as `npm run generate` makes them.
  await run(process.execPath, [inRepo("scripts/vendor-protos.mjs")]);
  server = await startTestServer();
  const res = await fetch(`${server.apiUrl}/iam/v2/groups/${server.org.uid}`, {
    method: "POST",
    headers: { authorization: `Bearer ${server.ownerToken}`, "content-type": "application/json" },
    body: JSON.stringify({ name: "team a" }),
  });
  assert.equal(res.status, 200);
  env = { ...process.env, PATH: `${BIN}${delimiter}${process.env.PATH}`, TOKEN: server.ownerToken, ORG: server.org.uid };
});
after(() => server.close());

const lines = (stdout: string) => stdout.trim().split("\n").map((l) => JSON.parse(l) as Record<string, unknown>);

describe("example clients", () => {
  test("Connect-ES on the generated code: reads, lists and reads an error's details", async () => {
    const { stdout } = await run(process.execPath, ["--import", "tsx", "examples/connect-es/client.ts"], { cwd: ROOT, env: { ...env, API_URL: server.apiUrl }, timeout: 60_000 });
    const [org, folders, failure] = lines(stdout);
    assert.deepEqual(org.organization && (org.organization as Record<string, unknown>).name, "acme");
    assert.deepEqual(folders, { folders: ["team a"], totalCount: "1" });
    assert.deepEqual(failure, { code: "NotFound", reason: "NOT_FOUND", domain: "api.test", resource: `${server.org.uid}/0123456789abcdef` });
  });

  test("grpc-js with google-protobuf messages, on stubs regenerated from proto/ by protoc-gen-ts", async () => {
    await run(`${BIN}/buf`, ["generate", "--template", "examples/grpc-js/buf.gen.yaml", "--path", "proto/platform", "--path", "proto-deps/google/rpc/status.proto", "--path", "proto-deps/google/rpc/error_details.proto"], {
      cwd: ROOT,
      env,
      timeout: 120_000,
    });
    const { stdout } = await run(process.execPath, ["--import", "tsx", "examples/grpc-js/client.ts"], { cwd: ROOT, env: { ...env, API: `127.0.0.1:${server.apiPort}` }, timeout: 60_000 });
    const [org, folders, failure] = lines(stdout);
    assert.deepEqual(org, { organization: { uid: server.org.uid, name: "acme" } });
    assert.deepEqual(folders, { folders: ["team a"], totalCount: 1 });
    assert.deepEqual(failure, { code: "NOT_FOUND", reason: "NOT_FOUND", detailTypes: ["google.rpc.ErrorInfo", "google.rpc.ResourceInfo"] });
  });

  test("a buf curl session through server reflection, error details decoded", { skip: bufCurlSkip }, async () => {
    const { stdout } = await run("bash", ["examples/buf-curl/session.sh"], { cwd: ROOT, env: { ...env, API: server.apiUrl, BUF: `${BIN}/buf` }, timeout: 120_000 });
    assert.match(stdout, /platform\.iam\.v2\.GroupsService/);
    assert.match(stdout, /"response": "pong"/);
    assert.match(stdout, /"name": "acme"/);
    assert.match(stdout, /"name": "team a"/);
    assert.match(stdout, /"code": "not_found"/);
    assert.match(stdout, /exit status 40/);
    assert.match(stdout, /google\.rpc\.ErrorInfo \{"reason":"NOT_FOUND","domain":"api\.test"\}/);
    assert.match(stdout, /google\.rpc\.ResourceInfo \{"resourceType":"group"/);
  });
});
