import assert from "node:assert/strict";
import { test } from "node:test";
import { Code, ConnectError, createClient, createRouterTransport } from "@connectrpc/connect";
import { ErrorInfoSchema } from "../../gen/google/rpc/error_details_pb.js";
import { PingService } from "../../gen/platform/ping/v2/ping_pb.js";
import { bookkeepingInterceptor } from "../../src/interceptors/bookkeeping-interceptor.js";
import { createLogger, type Logger } from "../../src/logger.js";
import { createMetrics } from "../../src/telemetry/metrics.js";

/** The bookkeeping interceptor as the server runs it (under connect-es's router here), over `logger`, with a call limit of `maxCallMs`. */
const bookkeeping = (maxCallMs: number, logger: Logger = createLogger("silent")) =>
  bookkeepingInterceptor({ logger, metrics: createMetrics(), errorDomain: "platform-api", maxCallMs });

/**
 * A Ping whose handler waits up to `ms` (less if its signal aborts) and then
 * resolves `finished` with whether its signal was aborted.
 */
function slowPing(ms: number) {
  let done: (aborted: boolean) => void = () => {};
  const finished = new Promise<boolean>((resolve) => (done = resolve));
  const transport = createRouterTransport(
    (router) =>
      router.service(PingService, {
        async ping(_req, ctx) {
          await new Promise((r) => {
            setTimeout(r, ms);
            ctx.signal.addEventListener("abort", r);
          });
          done(ctx.signal.aborted);
          return { response: "late" };
        },
      }),
    { router: { interceptors: [bookkeeping(50)] } },
  );
  return { client: createClient(PingService, transport), finished };
}

test("a call over the server's time limit is DEADLINE_EXCEEDED and its handler sees the abort", async () => {
  const { client, finished } = slowPing(5000);
  await assert.rejects(client.ping({}), (e) => {
    const err = ConnectError.from(e);
    return err.code === Code.DeadlineExceeded && err.findDetails(ErrorInfoSchema)[0]?.reason === "DEADLINE_EXCEEDED";
  });
  assert.equal(await finished, true, "a transaction checking the signal rolls back");
});

test("a call within the limit is untouched", async () => {
  const { client, finished } = slowPing(1);
  assert.equal((await client.ping({})).response, "late");
  assert.equal(await finished, false);
});

test("unknown errors become INTERNAL with a generic message; the cause is only logged", async () => {
  const logs: string[] = [];
  const transport = createRouterTransport(
    (router) =>
      router.service(PingService, {
        ping() {
          throw new Error("secret detail at /etc/passwd");
        },
      }),
    { router: { interceptors: [bookkeeping(5000, createLogger("debug", (l) => logs.push(l)))] } },
  );
  await assert.rejects(createClient(PingService, transport).ping({}), (e) => {
    const err = ConnectError.from(e);
    return err.code === Code.Internal && err.rawMessage === "Internal error" && err.findDetails(ErrorInfoSchema)[0]?.reason === "INTERNAL";
  });
  assert.ok(logs.some((l) => l.includes("secret detail")));
});
