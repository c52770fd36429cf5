import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import http from "node:http";
import http2 from "node:http2";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { defaultLimits } from "../../src/config.js";
import { createDualListener, cutShort, type DualListener } from "../../src/transport/listener.js";
import { bootstrapChild, startChildServer, type ChildServer } from "../support/child-server.js";

/**
 * No request kills the server: every route family is sent paths that name a folder, hold an empty
 * segment, climb with an encoded `..`, run past any file name's length, or carry a NUL byte, and the
 * process answers each (never a 5xx for these) and goes on serving. Below that, the listener's one
 * catch: a route that throws or rejects is answered 500 (or cut short once its answer began), the
 * failure is reported with its request, and the next request is served.
 */

const dir = mkdtempSync(join(tmpdir(), "platform-api-route-failures-"));
let server: ChildServer;
let token: string;

before(async () => {
  const db = join(dir, "platform.db");
  token = (await bootstrapChild(db, "acme")).ownerToken;
  server = await startChildServer({ db, registryDir: join(dir, "registry") });
});

after(async () => {
  server?.child.kill("SIGKILL");
  await server?.exit;
  rmSync(dir, { recursive: true, force: true });
});

/** The odd paths made from a route family's prefix (which ends with `/`). */
function oddPaths(prefix: string): string[] {
  return [
    prefix, // the folder itself
    `${prefix}assets/`, // a folder below it
    `${prefix}a//b`, // an empty segment
    `${prefix}%2e%2e/%2e%2e/%2e%2e/etc/passwd`, // `..` encoded
    `${prefix}..%2f..%2f..%2fetc%2fpasswd`,
    `${prefix}${"a".repeat(5000)}`, // longer than any file name
    `${prefix}a%00b`, // a NUL byte
    `${prefix}%00`,
  ];
}

const API_FAMILIES = ["/console/", "/docs/", "/auth/v1/", "/sts/", "/.well-known/", "/iam/v2/groups/", "/registry/v2/", "/platform.iam.v2.GroupsService/", "/healthz/", "/no/such/"];
const REGISTRY_FAMILIES = ["/v2/", "/v2/acme/app/manifests/", "/v2/acme/app/blobs/", "/v2/acme/app/blobs/uploads/", "/v2/acme/app/tags/", "/token/", "/v2/_catalog/"];

/** One HTTP/1.1 request; its status, or the error that ended it. */
function request(port: number, method: string, path: string, headers: Record<string, string> = {}): Promise<number | string> {
  return new Promise((resolve) => {
    const req = http.request({ host: "127.0.0.1", port, method, path, headers: { connection: "close", ...headers } }, (res) => {
      res.resume();
      res.on("end", () => resolve(res.statusCode ?? 0));
      res.on("error", () => {});
      res.on("close", () => resolve(res.complete ? (res.statusCode ?? 0) : "aborted"));
    });
    req.on("error", (error) => resolve(String(error)));
    req.end(method === "GET" ? undefined : "{}");
  });
}

describe("odd paths on every route family", () => {
  for (const [host, families] of [
    ["API", API_FAMILIES],
    ["registry", REGISTRY_FAMILIES],
  ] as const) {
    test(`the ${host} host answers each, never 5xx, and keeps serving`, { timeout: 120_000 }, async () => {
      const port = host === "API" ? server.apiPort : server.registryPort;
      const failures: string[] = [];
      for (const family of families) {
        for (const path of oddPaths(family)) {
          for (const [method, headers] of [
            ["GET", {}],
            ["GET", { authorization: `Bearer ${token}` }],
            ["POST", { authorization: `Bearer ${token}`, "content-type": "application/json" }],
          ] as const) {
            const status = await request(port, method, path, headers);
            if (typeof status !== "number" || status >= 500) failures.push(`${method} ${path.slice(0, 60)}: ${status}`);
          }
        }
        const ping = await fetch(`${server.apiUrl}/ping/v2/ping`);
        assert.equal(ping.status, 200, `after ${family}`);
      }
      assert.deepEqual(failures, []);
      assert.equal(server.child.exitCode, null, server.stderr());
    });
  }

  test("HTTP/2 requests for the same paths are answered too", { timeout: 60_000 }, async () => {
    const session = http2.connect(server.apiUrl);
    session.on("error", () => {});
    const statuses = await Promise.all(
      API_FAMILIES.flatMap(oddPaths).map(
        (path) =>
          new Promise<number | string>((resolve) => {
            const stream = session.request({ ":path": path });
            stream.on("response", (h) => resolve(Number(h[":status"])));
            stream.on("error", (error) => resolve(String(error)));
            stream.resume();
          }),
      ),
    );
    session.close();
    assert.deepEqual(
      statuses.filter((s) => typeof s !== "number" || s >= 500),
      [],
    );
    assert.equal((await fetch(`${server.apiUrl}/ping/v2/ping`)).status, 200);
  });
});

describe("the listener's one catch", () => {
  let listener: DualListener;
  let port: number;
  const failures: { error: string; path: string }[] = [];

  before(async () => {
    listener = createDualListener(
      (req, res) => {
        switch (req.url) {
          case "/throws":
            throw new Error("thrown by the route");
          case "/rejects":
            return Promise.reject(new Error("rejected by the route"));
          case "/rejects-midway":
            res.writeHead(200, { "content-type": "text/plain" });
            (res as http.ServerResponse).write("the start of an answer");
            return new Promise((_, reject) => setTimeout(() => reject(new Error("failed after the head")), 20));
          default:
            res.writeHead(200, { "content-length": "2" }).end("ok");
        }
      },
      defaultLimits,
      undefined,
      (error, req, res) => {
        failures.push({ error: (error as Error).message, path: req.url ?? "" });
        if (res.headersSent) cutShort(res);
        else res.writeHead(500, { "content-length": "0" }).end();
      },
    );
    await new Promise<void>((resolve) => listener.server.listen(0, "127.0.0.1", resolve));
    port = (listener.server.address() as { port: number }).port;
  });

  after(() => listener.close(0));

  test("a route that throws or rejects is answered 500 and reported; the next request is served", async () => {
    assert.equal(await request(port, "GET", "/throws"), 500);
    assert.equal(await request(port, "GET", "/rejects"), 500);
    assert.equal(await request(port, "GET", "/fine"), 200);
    assert.deepEqual(failures.splice(0), [
      { error: "thrown by the route", path: "/throws" },
      { error: "rejected by the route", path: "/rejects" },
    ]);
  });

  test("an answer that fails once begun is cut short, over HTTP/1.1 and HTTP/2", async () => {
    assert.match(String(await request(port, "GET", "/rejects-midway")), /aborted|socket hang up|ECONNRESET/);
    const session = http2.connect(`http://127.0.0.1:${port}`);
    session.on("error", () => {});
    const ended = await new Promise<string>((resolve) => {
      const stream = session.request({ ":path": "/rejects-midway" });
      stream.resume();
      stream.on("error", (error) => resolve(String(error)));
      stream.on("close", () => resolve(`closed with ${stream.rstCode}`));
    });
    session.close();
    assert.doesNotMatch(ended, /closed with 0$/);
    assert.equal(failures.length, 2);
    assert.equal(await request(port, "GET", "/fine"), 200);
  });
});
