import type { ServiceImpl } from "@connectrpc/connect";
import { PingService as PingV1Service } from "../../../gen/platform/ping/v1/ping_pb.js";
import { PingService } from "../../../gen/platform/ping/v2/ping_pb.js";
import { callV2 } from "../../aip/v1/index.js";

/** PingService v1: the v2 ping's answer in the v1 shape. */
export function createPingV1Service(v2: ServiceImpl<typeof PingService>): ServiceImpl<typeof PingV1Service> {
  return {
    ping: async (req, ctx) => ({ response: (await callV2(PingService.method.ping, v2.ping, {}, ctx)).response }),
  };
}
