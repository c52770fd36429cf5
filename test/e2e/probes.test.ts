import assert from "node:assert/strict";
import http from "node:http";
import http2 from "node:http2";
import type { AddressInfo } from "node:net";
import { after, describe, test } from "node:test";
import { sql } from "kysely";
import { createProbes } from "../../src/transport/http/probes.js";
import { dropFresh, testDatabases } from "../support/databases.js";
import { startTestServer } from "../support/test-server.js";

/** `/healthz` and `/readyz` on both hosts: plain HTTP, no credentials, over HTTP/1.1 and HTTP/2. */

interface Answer {
  status: number;
  body: string;
  headers: http.IncomingHttpHeaders;
}

function get(port: number, path: string, method = "GET"): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: "127.0.0.1", port, path, method, agent: false }, (res) => {
      let body = "";
      res.on("data", (chunk: Buffer) => (body += chunk.toString()));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body, headers: res.headers }));
    });
    req.on("error", reject);
    req.end();
  });
}

function getH2(port: number, path: string): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const session = http2.connect(`http://127.0.0.1:${port}`);
    session.on("error", reject);
    const stream = session.request({ ":path": path });
    let body = "";
    let status = 0;
    stream.on("response", (headers) => (status = Number(headers[":status"])));
    stream.on("data", (chunk: Buffer) => (body += chunk.toString()));
    stream.on("end", () => {
      session.close();
      resolve({ status, body, headers: {} });
    });
    stream.end();
  });
}

for (const database of await testDatabases()) {
  describe(`probes on ${database.name}`, { skip: database.skip }, () => {
    const urls: string[] = [];
    after(() => Promise.all(urls.map(dropFresh)));

    test("both hosts answer /healthz and /readyz 200 ok without credentials, over HTTP/1.1 and HTTP/2", async () => {
      const url = await database.fresh();
      urls.push(url);
      const server = await startTestServer({ dbUrl: url });
      try {
        for (const port of [server.apiPort, server.registryPort]) {
          for (const path of ["/healthz", "/readyz"]) {
            const answer = await get(port, path);
            assert.deepEqual([answer.status, answer.body], [200, "ok\n"], `${port}${path}`);
            assert.equal(answer.headers["content-type"], "text/plain; charset=utf-8");
            assert.equal(answer.headers["cache-control"], "no-store");
            assert.deepEqual(await getH2(port, path).then((a) => [a.status, a.body]), [200, "ok\n"], `h2 ${port}${path}`);
            const head = await get(port, path, "HEAD");
            assert.deepEqual([head.status, head.body], [200, ""]);
            const post = await get(port, path, "POST");
            assert.deepEqual([post.status, post.headers.allow], [405, "GET, HEAD"]);
          }
          // Only the exact paths: anything below them is the host's own 404.
          assert.equal((await get(port, "/healthz/x")).status, 404);
        }
        // A query string does not change the answer.
        assert.equal((await get(server.apiPort, "/readyz?verbose")).status, 200);
      } finally {
        await server.close();
      }
    });

    test("/readyz is 503 while a migration this build knows is not applied, and 200 again once it is", async () => {
      const url = await database.fresh();
      urls.push(url);
      const server = await startTestServer({ dbUrl: url });
      try {
        const newest = await sql<{ name: string }>`select name from kysely_migration order by name desc limit 1`.execute(server.store.db);
        const name = newest.rows[0].name;
        await sql`delete from kysely_migration where name = ${name}`.execute(server.store.db);
        for (const port of [server.apiPort, server.registryPort]) {
          const answer = await get(port, "/readyz");
          assert.equal(answer.status, 503);
          assert.match(answer.body, /migrations are not all applied/);
          assert.equal((await get(port, "/healthz")).status, 200, "live all the same");
        }
        await sql`insert into kysely_migration (name, timestamp) values (${name}, ${new Date().toISOString()})`.execute(server.store.db);
        assert.equal((await get(server.apiPort, "/readyz")).status, 200);
      } finally {
        await server.close();
      }
    });

    test("/readyz is 503 once the store is closed; /healthz stays 200", async () => {
      const url = await database.fresh();
      urls.push(url);
      const server = await startTestServer({ dbUrl: url });
      try {
        await server.store.db.destroy();
        for (const port of [server.apiPort, server.registryPort]) {
          const answer = await get(port, "/readyz");
          assert.deepEqual([answer.status, answer.body], [503, "the store is unreachable\n"]);
          assert.equal((await get(port, "/healthz")).status, 200);
        }
      } finally {
        await server.server.close();
      }
    });
  });
}

describe("the probe handler", () => {
  /** A plain HTTP server answering only the probes of `probes`. */
  async function serve(probes: ReturnType<typeof createProbes>) {
    const server = http.createServer((req, res) => {
      if (!probes.handle(req, res)) res.writeHead(404).end();
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    return { port: (server.address() as AddressInfo).port, close: () => new Promise((resolve) => server.close(resolve)) };
  }

  test("a store that does not answer within the timeout is not ready; concurrent checks share one query", async () => {
    let queries = 0;
    const probes = createProbes({ ready: () => (queries++, new Promise<boolean>(() => {})), timeoutMs: 100 });
    const server = await serve(probes);
    try {
      const started = Date.now();
      const answers = await Promise.all([get(server.port, "/readyz"), get(server.port, "/readyz"), get(server.port, "/readyz")]);
      for (const answer of answers) assert.deepEqual([answer.status, answer.body], [503, "the store did not answer within 100 ms\n"]);
      assert.ok(Date.now() - started < 2000);
      assert.equal(queries, 1);
      assert.equal((await get(server.port, "/healthz")).status, 200);
    } finally {
      await server.close();
    }
  });

  test("after stopServing (shutdown) /readyz is 503 without asking the store, /healthz stays 200", async () => {
    let queries = 0;
    const probes = createProbes({ ready: async () => (queries++, true), timeoutMs: 1000 });
    const server = await serve(probes);
    try {
      assert.equal((await get(server.port, "/readyz")).status, 200);
      probes.stopServing();
      assert.deepEqual(await get(server.port, "/readyz").then((a) => [a.status, a.body]), [503, "shutting down\n"]);
      assert.equal((await get(server.port, "/healthz")).status, 200);
      assert.equal(queries, 1);
    } finally {
      await server.close();
    }
  });
});
