import assert from "node:assert/strict";
import http from "node:http";
import http2 from "node:http2";
import { describe, test } from "node:test";
import { createLocalJWKSet, jwtVerify, type JSONWebKeySet } from "jose";
import type { JsonObject } from "@bufbuild/protobuf";
import { GroupsService } from "../../gen/platform/iam/v2/groups_service_pb.js";
import { bufCurl } from "../support/buf-curl.js";
import { serveOverWires } from "../support/over-wires.js";
import { methodOf, reasonOf } from "../support/wires.js";

const MAX_BODY = 2048;
const MAX_HEADER = 8192;
const STREAMS = 7;


const { server, wires } = serveOverWires({ limits: { maxBodyBytes: MAX_BODY, maxHeaderBytes: MAX_HEADER, maxConcurrentStreams: STREAMS } });

describe("limits", () => {
  test("an oversized body is RESOURCE_EXHAUSTED (413 on REST) on every protocol and writes nothing", async () => {
    const name = "x".repeat(MAX_BODY + 10);
    for (const wire of wires()) {
      const out = await wire.call(
        methodOf(GroupsService, "CreateGroup"),
        { parent: server().org.uid, group: { name } },
        { method: "POST", path: `/iam/v2/groups/${server().org.uid}`, body: { name } },
        server().ownerToken,
      );
      assert.equal(out.code, 8, `${wire.name}: ${out.message}`);
      if (wire.name === "rest") assert.equal(out.httpStatus, 413);
      if (wire.name === "rest") assert.equal(reasonOf(out), "REQUEST_TOO_LARGE");
    }
    const count = await server().store.db.selectFrom("groups").select((eb) => eb.fn.countAll<number>().as("n")).where("name", "=", name).executeTakeFirstOrThrow();
    assert.equal(Number(count.n), 0);
  });

  test("an oversized header block is answered 431 on HTTP/1.1", async () => {
    const status = await new Promise<number>((resolve, reject) => {
      const req = http.request({ host: "127.0.0.1", port: server().apiPort, path: "/ping/v2/ping", headers: { "x-big": "y".repeat(MAX_HEADER + 100) } }, (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      });
      req.on("error", reject);
      req.end();
    });
    assert.equal(status, 431);
  });

  test("HTTP/2 advertises the concurrent stream and header list limits", async () => {
    const session = http2.connect(`http://127.0.0.1:${server().apiPort}`);
    const settings = await new Promise<http2.Settings>((resolve) => session.once("remoteSettings", resolve));
    session.close();
    assert.equal(settings.maxConcurrentStreams, STREAMS);
    assert.equal(settings.maxHeaderListSize, MAX_HEADER);
  });
});

test("one log line per call: procedure, protocol, code, duration, caller", async () => {
  server().logs.length = 0;
  for (const wire of wires()) {
    await wire.call(methodOf(GroupsService, "GetGroup"), { uid: server().org.uid }, { method: "GET", path: `/iam/v2/groups/${server().org.uid}` }, server().ownerToken);
  }
  const calls = server().logs.map((l) => JSON.parse(l) as JsonObject).filter((l) => l.msg === "call");
  assert.deepEqual(calls.map((c) => c.protocol).sort(), ["connect", "grpc", "grpc-web", "rest"]);
  for (const c of calls) {
    assert.equal(c.procedure, "/platform.iam.v2.GroupsService/GetGroup");
    assert.equal(c.code, "ok");
    assert.equal(c.caller, server().ownerUid);
    assert.equal(typeof c.durationMs, "number");
  }
});

test("the server's tokens verify against its published OIDC discovery and JWKS", async () => {
  const discovery = (await (await fetch(`${server().apiUrl}/.well-known/openid-configuration`)).json()) as JsonObject;
  assert.equal(discovery.issuer, "http://api.test");
  const jwksPath = new URL(discovery.jwks_uri as string).pathname;
  const jwks = (await (await fetch(`${server().apiUrl}${jwksPath}`)).json()) as JSONWebKeySet;
  assert.ok(jwks.keys.every((k) => !("d" in k)), "no private key material is published");
  const { payload } = await jwtVerify(server().ownerToken, createLocalJWKSet(jwks), { issuer: "http://api.test", audience: "http://api.test" });
  assert.equal(payload.sub, server().ownerUid);
  assert.ok(payload.exp! - payload.iat! <= 3600);
});

test("a token for another audience is refused", async () => {
  const { token } = await server().server.tokens.issue({ subject: server().ownerUid, audience: "http://registry.test" });
  const res = await fetch(`${server().apiUrl}/iam/v2/groups/${server().org.uid}`, { headers: { authorization: `Bearer ${token}` } });
  assert.equal(res.status, 401);
});

test("gRPC health reports SERVING", async () => {
  const res = await fetch(`${server().apiUrl}/grpc.health.v1.Health/Check`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: "{}",
  });
  assert.deepEqual(await res.json(), { status: "SERVING" });
});

test("buf curl reaches GroupsService through server reflection, with no schema file", async () => {
  // The server runs in this process: the child must be awaited, not run synchronously.
  const stdout = await bufCurl(
    "--protocol",
    "grpc",
    "-H",
    `Authorization: Bearer ${server().ownerToken}`,
    "-d",
    JSON.stringify({ uid: server().org.uid }),
    `http://127.0.0.1:${server().apiPort}/platform.iam.v2.GroupsService/GetGroup`,
  );
  assert.equal((JSON.parse(stdout) as JsonObject).name, "acme");
});

test("the registry host answers the registry version check on its own port, challenging a caller without a token", async () => {
  const res = await fetch(`${server().registryUrl}/v2/`);
  assert.equal(res.status, 401);
  assert.equal(res.headers.get("docker-distribution-api-version"), "registry/2.0");
  assert.match(res.headers.get("www-authenticate") ?? "", /^Bearer realm="http:\/\/registry\.test\/token"/);
});
