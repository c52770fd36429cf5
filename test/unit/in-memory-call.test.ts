// The in-memory unary call (the gRPC unary path and REST use it): its handler context, deadline and signal.
import assert from "node:assert/strict";
import { test } from "node:test";
import { create } from "@bufbuild/protobuf";
import { Code, ConnectError, createContextValues, createServiceImplSpec, type HandlerContext } from "@connectrpc/connect";
import { PingRequestSchema, PingService, type PingResponse } from "../../gen/platform/ping/v2/ping_pb.js";
import { bookkeepingInterceptor } from "../../src/interceptors/bookkeeping-interceptor.js";
import { createLogger } from "../../src/logger.js";
import { createMetrics } from "../../src/telemetry/metrics.js";
import { createUnaryCaller } from "../../src/transport/rpc/call.js";
import { CallLife } from "../../src/transport/rpc/call-life.js";

/** A Ping that waits until its signal aborts (or `ms`), recording the context it ran with. */
function caller(ms: number, maxMs = 5000) {
  const seen: { context?: HandlerContext; abortedWith?: unknown; remaining?: number } = {};
  const spec = createServiceImplSpec<typeof PingService>(PingService, {
    async ping(_req, ctx) {
      seen.context = ctx;
      seen.remaining = ctx.timeoutMs();
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, ms);
        ctx.signal.addEventListener("abort", () => {
          clearTimeout(timer);
          seen.abortedWith = ctx.signal.reason;
          resolve();
        });
      });
      return { response: "pong" };
    },
  });
  const call = createUnaryCaller([{ ...spec }], [bookkeepingInterceptor({ logger: createLogger("silent"), metrics: createMetrics(), errorDomain: "platform-api", maxCallMs: maxMs })], "grpc");
  const run = (life: CallLife, timeoutMs?: number) =>
    call(PingService.method.ping, {
      input: create(PingRequestSchema, {}),
      header: new Headers({ "x-test": "1" }),
      life,
      contextValues: createContextValues(),
      timeoutMs,
      url: "http://in-process/platform.ping.v2.PingService/Ping",
    });
  return { run, seen };
}

test("a finished call answers, with the context connect-es would give, and its signal ends aborted", async () => {
  const { run, seen } = caller(0);
  const life = new CallLife();
  const answer = await run(life);
  assert.equal((answer.message as PingResponse).response, "pong");
  const ctx = seen.context!;
  assert.equal(ctx.method, PingService.method.ping);
  assert.equal(ctx.service, PingService);
  assert.equal(ctx.protocolName, "grpc");
  assert.equal(ctx.requestMethod, "POST");
  assert.equal(ctx.requestHeader.get("x-test"), "1");
  assert.equal(seen.remaining, undefined, "no deadline asked: timeoutMs() is undefined");
  assert.equal(life.signal.aborted, true, "the call's signal is released at its end");
  assert.equal(ConnectError.from(life.signal.reason).code, Code.Canceled);
});

test("the client's deadline aborts the handler's signal, and the call is DEADLINE_EXCEEDED", async () => {
  const { run, seen } = caller(5000);
  const started = Date.now();
  await assert.rejects(run(new CallLife(), 40), (e) => ConnectError.from(e).code === Code.DeadlineExceeded);
  assert.ok(Date.now() - started < 2000);
  assert.ok(seen.remaining !== undefined && seen.remaining > 0 && seen.remaining <= 40, `timeoutMs() ${seen.remaining}`);
  assert.equal(ConnectError.from(seen.abortedWith).code, Code.DeadlineExceeded);
});

test("the server's time limit aborts the handler's signal and the call is DEADLINE_EXCEEDED", async () => {
  const { run, seen } = caller(5000, 30);
  await assert.rejects(run(new CallLife()), (e) => ConnectError.from(e).code === Code.DeadlineExceeded);
  assert.ok(seen.abortedWith !== undefined, "the handler saw the abort");
});

test("the caller aborting (the client went away) reaches the handler through the interceptors", async () => {
  const { run, seen } = caller(5000);
  const life = new CallLife();
  const reason = new ConnectError("the client closed the stream", Code.Canceled);
  setTimeout(() => life.end(reason), 20);
  await assert.rejects(run(life), (e) => ConnectError.from(e).code === Code.Canceled);
  assert.equal(seen.abortedWith, reason);
});

test("a call whose deadline is spent when it arrives is not run: DEADLINE_EXCEEDED", async () => {
  const { run, seen } = caller(0);
  await assert.rejects(run(new CallLife(), 0), (e) => ConnectError.from(e).code === Code.DeadlineExceeded);
  assert.equal(seen.context, undefined, "the handler never ran");
});

test("an interceptor that hands on a copy of the request with other headers and values is what the handler sees", async () => {
  let seen: HandlerContext | undefined;
  const spec = createServiceImplSpec<typeof PingService>(PingService, {
    ping(_req, ctx) {
      seen = ctx;
      return { response: "pong" };
    },
  });
  const replaced = createContextValues();
  const call = createUnaryCaller(
    [{ ...spec }],
    [(next) => (req) => next({ ...req, header: new Headers({ "x-test": "replaced" }), contextValues: replaced })],
    "grpc",
  );
  await call(PingService.method.ping, {
    input: create(PingRequestSchema, {}),
    header: new Headers({ "x-test": "original" }),
    life: new CallLife(),
    contextValues: createContextValues(),
    url: "http://in-process/platform.ping.v2.PingService/Ping",
  });
  assert.equal(seen?.requestHeader.get("x-test"), "replaced");
  assert.equal(seen?.values, replaced);
});
