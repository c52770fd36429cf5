import * as http2 from "node:http2";
import type { AddressInfo } from "node:net";
import { Code, ConnectError } from "@connectrpc/connect";
import { connectNodeAdapter } from "@connectrpc/connect-node";
import { file_platform_iam_v2_groups_service } from "../../gen/platform/iam/v2/groups_service_pb.js";
import { PingService, file_platform_ping_v2_ping } from "../../gen/platform/ping/v2/ping_pb.js";
import { registerHealth, type HealthControl } from "../../src/system/health-service.js";
import { registerReflection } from "../../src/system/reflection-service.js";

/** A cleartext HTTP/2 connect-node server with reflection, health and a Ping that says "pong". */
export interface SystemServer {
  readonly port: number;
  readonly health: HealthControl;
  /** What the health `check()` reports. */
  storeUp: boolean;
  /** Aborts the adapter's shutdownSignal with UNAVAILABLE, then closes the server. */
  close(): Promise<void>;
}

export const healthServices = ["platform.ping.v2.PingService", "platform.iam.v2.GroupsService"];

export async function startSystemServer(): Promise<SystemServer> {
  const shutdown = new AbortController();
  let health: HealthControl | undefined;
  const state = { storeUp: true };
  const server = http2.createServer(
    connectNodeAdapter({
      shutdownSignal: shutdown.signal,
      routes: (router) => {
        registerReflection(router, [file_platform_iam_v2_groups_service, file_platform_ping_v2_ping]);
        health = registerHealth(router, { check: () => state.storeUp, services: healthServices });
        router.service(PingService, { ping: () => ({ response: "pong" }) });
      },
    }),
  );
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return Object.assign(state, {
    port: (server.address() as AddressInfo).port,
    health: health!,
    close: () =>
      new Promise<void>((resolve, reject) => {
        shutdown.abort(new ConnectError("server is shutting down", Code.Unavailable));
        server.close((err) => (err ? reject(err) : resolve()));
      }),
  });
}
