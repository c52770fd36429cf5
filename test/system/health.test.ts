import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import * as grpc from "@grpc/grpc-js";
import { grpcClient, unary } from "./grpc-clients.js";
import { healthServices, startSystemServer, type SystemServer } from "./system-server.js";

interface HealthResponse {
  status: string;
}

let server: SystemServer;
let client: grpc.Client;

before(async () => {
  server = await startSystemServer();
  client = healthClient(server);
});
after(async () => {
  client.close();
  await server.close();
});

function healthClient(s: SystemServer): grpc.Client {
  return grpcClient("grpc/health/v1/health.proto", "grpc.health.v1.Health", s.port);
}

const check = (service: string) => unary<HealthResponse>(client, "Check", { service });

/** Opens a Watch stream; `next()` resolves with the next status sent. */
function watch(c: grpc.Client, service: string) {
  const call = (c as unknown as Record<string, (req: object) => grpc.ClientReadableStream<HealthResponse>>)
    .Watch!.call(c, { service });
  const received: string[] = [];
  const waiting: ((status: string) => void)[] = [];
  call.on("data", (res: HealthResponse) => {
    const resolve = waiting.shift();
    if (resolve) resolve(res.status);
    else received.push(res.status);
  });
  call.on("error", () => {}); // CANCELLED after cancel(), or the shutdown error
  const ended = new Promise<grpc.StatusObject>((resolve) => call.on("status", resolve));
  return {
    next: () => new Promise<string>((resolve) => (received.length ? resolve(received.shift()!) : waiting.push(resolve))),
    cancel: () => call.cancel(),
    ended,
  };
}

describe("grpc.health.v1.Health", { timeout: 10_000 }, () => {
  test("Check reports SERVING for the server and each known service", async () => {
    assert.equal((await check("")).status, "SERVING");
    for (const service of healthServices) assert.equal((await check(service)).status, "SERVING");
  });

  test("Check of an unknown service fails with NOT_FOUND", async () => {
    await assert.rejects(check("nope.Nope"), (err: grpc.ServiceError) => err.code === grpc.status.NOT_FOUND);
  });

  test("Check reports NOT_SERVING while check() fails", async () => {
    server.storeUp = false;
    try {
      assert.equal((await check("")).status, "NOT_SERVING");
      assert.equal((await check(healthServices[0]!)).status, "NOT_SERVING");
    } finally {
      server.storeUp = true;
    }
    assert.equal((await check("")).status, "SERVING");
  });

  test("List reports every known service", async () => {
    const res = await unary<{ statuses: Record<string, HealthResponse> }>(client, "List", {});
    assert.deepEqual(Object.keys(res.statuses).sort(), ["", ...healthServices].sort());
    assert.ok(Object.values(res.statuses).every((s) => s.status === "SERVING"));
  });

  test("setServing flips Check and Watch streams receive each change", async () => {
    const watcher = watch(client, "");
    assert.equal(await watcher.next(), "SERVING");
    server.health.setServing(false);
    assert.equal(await watcher.next(), "NOT_SERVING");
    assert.equal((await check("")).status, "NOT_SERVING");
    server.health.setServing(true);
    assert.equal(await watcher.next(), "SERVING");
    assert.equal((await check("")).status, "SERVING");
    watcher.cancel();
    assert.equal((await watcher.ended).code, grpc.status.CANCELLED);
  });

  test("Watch of an unknown service sends SERVICE_UNKNOWN and stays open", async () => {
    const watcher = watch(client, "nope.Nope");
    assert.equal(await watcher.next(), "SERVICE_UNKNOWN");
    watcher.cancel();
    await watcher.ended;
  });

  test("server shutdown ends open Watch streams with the shutdown reason", async () => {
    const own = await startSystemServer();
    const ownClient = healthClient(own);
    const watcher = watch(ownClient, "");
    assert.equal(await watcher.next(), "SERVING");
    own.health.setServing(false);
    assert.equal(await watcher.next(), "NOT_SERVING");
    const closed = own.close();
    assert.equal((await watcher.ended).code, grpc.status.UNAVAILABLE);
    ownClient.close();
    await closed;
  });
});
