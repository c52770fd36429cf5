import { createRegistry } from "@bufbuild/protobuf";
import { createContextValues, type ConnectRouter } from "@connectrpc/connect";
import { connectNodeAdapter } from "@connectrpc/connect-node";
import { file_google_rpc_error_details } from "../gen/google/rpc/error_details_pb.js";
import { errorDomainOf } from "./api/errors.js";
import { createApiHost } from "./api-host.js";
import { createDiscoveryRoutes } from "./auth/discovery.js";
import { createStsRoute } from "./auth/sts-route.js";
import type { TokenService } from "./auth/tokens.js";
import { createUpstreamKeys } from "./auth/upstream-keys.js";
import { eventsConfigOf, type ServerConfig } from "./config.js";
import { startDispatcher } from "./domains/events/dispatcher.js";
import { withFrameworkErrorsAsApiErrors } from "./framework-errors.js";
import { withSpecGrpcMessage } from "./grpc-message.js";
import { protocolKey, type WireProtocol } from "./interceptors/request-context.js";
import { createDualListener, type DualListener } from "./listener.js";
import type { Logger } from "./logger.js";
import type { ContentStore } from "./registry/content-store.js";
import { createRegistryHost } from "./registry/registry-host.js";
import { createProbes, type Probes } from "./http/probes.js";
import { sendStatus } from "./http/status-json.js";
import { createRestTranscoder, type NodeRequest, type NodeResponse } from "./rest/transcoder.js";
import { migrationsApplied, type Store } from "./store/store.js";

/** Longest a `/readyz` check waits for the store, ms. */
const PROBE_TIMEOUT_MS = 2_000;

/** `/healthz` and `/readyz` ahead of a host's own routes (plain HTTP, no authentication). */
function withProbes<Req extends NodeRequest, Res extends NodeResponse>(probes: Probes, handler: (req: Req, res: Res) => void) {
  return (req: Req, res: Res) => void (probes.handle(req, res) || handler(req, res));
}

export interface PlatformServer {
  api: DualListener;
  registry: DualListener;
  tokens: TokenService;
  /** Stops accepting, lets calls in flight finish. Does not close the store. */
  close(): Promise<void>;
}

function protocolOf(req: NodeRequest): WireProtocol {
  const type = req.headers["content-type"] ?? "";
  if (type.startsWith("application/grpc-web")) return "grpc-web";
  if (type.startsWith("application/grpc")) return "grpc";
  return "connect";
}

/**
 * Builds the API and registry hosts on an open store: the request flow is
 * wire -> adapter (or REST transcoder; request decoding, its failures made
 * API errors by `withFrameworkErrorsAsApiErrors`) -> interceptors (stream shutdown -> logging ->
 * errors -> deadline -> authentication -> authorization) -> service handler ->
 * repository.
 */
export async function createServer(store: Store, config: ServerConfig, logger: Logger, content: ContentStore): Promise<PlatformServer> {
  const host = await createApiHost(store, config, logger);
  const errorDomain = errorDomainOf(config);

  let router: ConnectRouter | undefined;
  const adapter = connectNodeAdapter({
    interceptors: host.interceptors,
    readMaxBytes: config.limits.maxBodyBytes,
    routes(r) {
      router = r;
      host.routes(r);
      r.handlers.forEach((handler, i) => (r.handlers[i] = withFrameworkErrorsAsApiErrors(handler, logger, errorDomain)));
    },
    contextValues: (req) => createContextValues().set(protocolKey, protocolOf(req)),
    fallback: (req, res) => void fallback(req, res),
  });
  if (!router) throw new Error("connectNodeAdapter did not build a router");

  const rest = createRestTranscoder({
    services: host.services,
    handlers: router.handlers,
    registry: createRegistry(...host.files, file_google_rpc_error_details),
    maxBodyBytes: config.limits.maxBodyBytes,
    errorDomain,
    onError: (error) => logger.error("REST transcoding failed", { error: String(error) }),
  });
  const discovery = createDiscoveryRoutes(config, host.tokens);
  const upstream = createUpstreamKeys({
    allowHttp: config.upstreamIssuers?.allowHttp ?? false,
    allowPrivateAddresses: config.upstreamIssuers?.allowPrivateAddresses ?? false,
    timeoutMs: config.limits.upstreamFetchTimeoutMs,
    maxBytes: config.limits.upstreamFetchMaxBytes,
  });
  const sts = createStsRoute({ config, tokens: host.tokens, db: store.db, logger, upstream });

  async function fallback(req: NodeRequest, res: NodeResponse) {
    if (await discovery(req, res)) return;
    if (await sts(req, res)) return;
    if (await rest(req, res)) return;
    sendStatus(res, 404, { code: 5, message: `Not found: no route for ${req.method} ${req.url?.split("?")[0]}` }, errorDomain);
  }

  const probes = createProbes({ ready: () => migrationsApplied(store.db), timeoutMs: PROBE_TIMEOUT_MS });
  const api = createDualListener(withProbes(probes, withSpecGrpcMessage(adapter)), config.limits, config.tls);
  const registry = createRegistryHost({ config, logger, db: store.db, tokens: host.tokens, content });
  const registryHost = createDualListener(withProbes(probes, registry.handler), { ...config.limits, requestTimeoutMs: config.limits.registryRequestTimeoutMs }, config.tls);
  const dispatcher = startDispatcher({ db: store.db, tokens: host.tokens, config: eventsConfigOf(config), logger, source: `${config.apiUrl}/events/v2/subscriptions` });
  return {
    api,
    registry: registryHost,
    tokens: host.tokens,
    async close() {
      host.setServing(false);
      probes.stopServing();
      host.endStreams();
      registry.close();
      await Promise.all([api.close(), registryHost.close(), dispatcher.close()]);
    },
  };
}
