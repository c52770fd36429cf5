import { file_platform_ping_v2_ping, PingService } from "../../../gen/platform/ping/v2/ping_pb.js";
import { bind, type Domain } from "../domain.js";
import { createPingService } from "./ping-service.js";

/** Ping (`platform.ping.v2`): a liveness answer that needs no credential. */
export const ping: Domain = {
  name: "ping",
  files: [file_platform_ping_v2_ping],
  services: [bind(PingService, () => createPingService())],
  migrations: {},
  ownedByGroup: [],
  deletedWithRepo: [],
};
