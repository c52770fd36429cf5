import type { ServiceImpl } from "@connectrpc/connect";
import { PingService } from "../../../gen/platform/ping/v2/ping_pb.js";

/** PingService: a connectivity check that needs no credential. */
export function createPingService(): ServiceImpl<typeof PingService> {
  return {
    ping: () => ({ response: "pong" }),
  };
}
