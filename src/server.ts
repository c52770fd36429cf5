import { randomBytes } from "node:crypto";
import { createRegistry, type DescFile } from "@bufbuild/protobuf";
import { createContextValues, type ConnectRouter, type Interceptor } from "@connectrpc/connect";
import { connectNodeAdapter } from "@connectrpc/connect-node";
import { file_google_rpc_error_details } from "../gen/google/rpc/error_details_pb.js";
import { file_platform_iam_v2_groups_service, GroupsService } from "../gen/platform/iam/v2/groups_service_pb.js";
import { file_platform_ping_v2_ping, PingService } from "../gen/platform/ping/v2/ping_pb.js";
import { createPager } from "./api/pagination.js";
import { prepareStore } from "./bootstrap.js";
import { createTokenService, type TokenService } from "./auth/tokens.js";
import type { ServerConfig } from "./config.js";
import { authenticationInterceptor } from "./interceptors/authentication-interceptor.js";
import { authorizationInterceptor } from "./interceptors/authorization-interceptor.js";
import { deadlineInterceptor } from "./interceptors/deadline-interceptor.js";
import { errorInterceptor } from "./interceptors/error-interceptor.js";
import { loggingInterceptor } from "./interceptors/logging-interceptor.js";
import { protocolKey, type WireProtocol } from "./interceptors/request-context.js";
import { withSpecGrpcMessage } from "./grpc-message.js";
import { createDualListener, type DualListener } from "./listener.js";
import type { Logger } from "./logger.js";
import { createRestTranscoder, type NodeRequest, type NodeResponse } from "./rest/transcoder.js";
import { sendStatus } from "./rest/status-json.js";
import { createDiscoveryRoutes } from "./auth/discovery.js";
import { createRegistryHost } from "./registry/registry-host.js";
import type { ServiceDeps } from "./services/deps.js";
import { createGroupsService } from "./services/iam/groups-service.js";
import { createPingService } from "./services/ping/ping-service.js";
import { registerHealth } from "./services/system/health-service.js";
import { registerReflection } from "./services/system/reflection-service.js";
import { serverSecret } from "./store/repositories/server-keys.js";
import type { Store } from "./store/store.js";


/** The proto files whose services we serve: published by reflection, transcoded to REST. */
const API_FILES: DescFile[] = [file_platform_ping_v2_ping, file_platform_iam_v2_groups_service];

export interface PlatformServer {
  api: DualListener;
  registry: DualListener;
  tokens: TokenService;
  /** Stops accepting, lets calls in flight finish. Does not close the store. */
  close(): Promise<void>;
}

/** Registers every service of the API host on `router`. */
function registerServices(router: ConnectRouter, deps: ServiceDeps, store: Store): { setServing(serving: boolean): void } {
  router.service(PingService, createPingService());
  router.service(GroupsService, createGroupsService(deps));
  registerReflection(router, API_FILES);
  return registerHealth(router, {
    services: [PingService.typeName, GroupsService.typeName],
    check: async () => {
      try {
        await store.db.selectFrom("server_secrets").select("name").limit(1).execute();
        return true;
      } catch {
        return false;
      }
    },
  });
}

function protocolOf(req: NodeRequest): WireProtocol {
  const type = req.headers["content-type"] ?? "";
  if (type.startsWith("application/grpc-web")) return "grpc-web";
  if (type.startsWith("application/grpc")) return "grpc";
  return "connect";
}

/**
 * Builds the API and registry hosts on an open store: the request flow is
 * wire -> adapter (or REST transcoder) -> interceptors (logging -> errors ->
 * deadline -> authentication -> authorization) -> service handler -> repository.
 */
export async function createServer(store: Store, config: ServerConfig, logger: Logger): Promise<PlatformServer> {
  const now = Date.now;
  await prepareStore(store, now());
  const tokens = await createTokenService(store.db, config.apiUrl, now);
  const pageSecret = await serverSecret(store.db, "page-token-hmac", () => randomBytes(32).toString("base64url"), now());
  const deps: ServiceDeps = { db: store.db, pager: createPager({ secret: Buffer.from(pageSecret, "base64url"), now }), tokens, now };

  const interceptors: Interceptor[] = [
    loggingInterceptor(logger),
    errorInterceptor(logger),
    deadlineInterceptor(config.limits.requestTimeoutMs),
    authenticationInterceptor(tokens, store.db, config.apiUrl),
    authorizationInterceptor(),
  ];

  let router: ConnectRouter | undefined;
  let health: { setServing(serving: boolean): void } | undefined;
  const adapter = connectNodeAdapter({
    interceptors,
    readMaxBytes: config.limits.maxBodyBytes,
    routes(r) {
      router = r;
      health = registerServices(r, deps, store);
    },
    contextValues: (req) => createContextValues().set(protocolKey, protocolOf(req)),
    fallback: (req, res) => void fallback(req, res),
  });
  if (!router) throw new Error("connectNodeAdapter did not build a router");

  const registry = createRegistry(...API_FILES, file_google_rpc_error_details);
  const rest = createRestTranscoder({
    services: [PingService, GroupsService],
    handlers: router.handlers,
    registry,
    maxBodyBytes: config.limits.maxBodyBytes,
  });
  const discovery = createDiscoveryRoutes(config, tokens);

  async function fallback(req: NodeRequest, res: NodeResponse) {
    try {
      if (await discovery(req, res)) return;
      if (await rest(req, res)) return;
      sendStatus(res, 404, { code: 5, message: `Not found: no route for ${req.method} ${req.url?.split("?")[0]}` });
    } catch (error) {
      logger.error("fallback route failed", { error: String(error) });
      if (!res.headersSent) sendStatus(res, 500, { code: 13, message: "Internal error" });
    }
  }

  const api = createDualListener(withSpecGrpcMessage(adapter), config.limits);
  const registryHost = createDualListener(createRegistryHost(config, logger), config.limits);
  return {
    api,
    registry: registryHost,
    tokens,
    async close() {
      health?.setServing(false);
      await Promise.all([api.close(), registryHost.close()]);
    },
  };
}
