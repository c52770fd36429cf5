import { file_platform_ping_v1_ping, PingService as PingV1Service } from "../../../gen/platform/ping/v1/ping_pb.js";
import { file_platform_ping_v2_ping, PingService } from "../../../gen/platform/ping/v2/ping_pb.js";
import { bind, type Domain } from "../kit/domain.js";
import { createPingService } from "./ping-service.js";
import { createPingV1Service } from "./ping-v1-service.js";

/** Ping (`platform.ping.v2`, and `platform.ping.v1` over it): a liveness answer that needs no credential. */
export const ping: Domain = {
  name: "ping",
  files: [file_platform_ping_v2_ping, file_platform_ping_v1_ping],
  services: [bind(PingService, () => createPingService()), bind(PingV1Service, () => createPingV1Service(createPingService()))],
  migrations: {},
  ownedByGroup: [],
  deletedWithRepo: [],
};
