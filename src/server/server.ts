import { createRegistry, type DescMethod } from "@bufbuild/protobuf";
import { createContextValues, type ConnectError, type ConnectRouter } from "@connectrpc/connect";
import { connectNodeAdapter } from "@connectrpc/connect-node";
import { file_google_rpc_error_details } from "../../gen/google/rpc/error_details_pb.js";
import { errorDomainOf } from "../aip/errors.js";
import { createApiHost } from "./api-host.js";
import { createDiscoveryRoutes } from "../transport/auth/discovery.js";
import { createStsRoute } from "../transport/auth/sts-route.js";
import { createLoginRoutes } from "../transport/auth/login/login-routes.js";
import { createRegistryPasswordRoutes } from "../transport/auth/registry-password-routes.js";
import type { OutboundPolicy } from "../outbound/fetch.js";
import { createConsoleRoutes } from "../transport/console/console-route.js";
import type { TokenService } from "../access/tokens.js";
import { createUpstreamKeys } from "../transport/auth/upstream-keys.js";
import { advisoryFeedsConfigOf, eventsConfigOf, retentionConfigOf, scanConfigOf, type ServerConfig } from "../config.js";
import { frameworkErrorAsApiError, withFrameworkErrorsAsApiErrors } from "../transport/rpc/framework-errors.js";
import { withSpecGrpcMessage } from "../transport/rpc/grpc-message.js";
import { withMessageJsonAnswers } from "../transport/rpc/adapter-json.js";
import { withCors } from "../transport/http/cors.js";
import { connectionKey, protocolKey, type WireProtocol } from "../interceptors/request-context.js";
import { createDualListener, cutShort, type DualListener, type FailureAnswer } from "../transport/listener.js";
import type { Logger } from "../logger.js";
import type { ContentStore } from "../domains/registry/index.js";
import { createGrantsCache, GRANTS_MAX_AGE_MS } from "../domains/iam/index.js";
import { startJobs } from "./domains.js";
import type { Job } from "../domains/kit/jobs.js";
import { createRegistryHost } from "../transport/oci/registry-host.js";
import { createProbes, type Probes } from "../transport/http/probes.js";
import { sendStatus } from "../transport/http/status-json.js";
import { createApiDocsRoutes } from "../transport/rest/api-docs.js";
import { JSON_OPTIONS, withConnectUnaryPath } from "../transport/rpc/connect-unary.js";
import { withGrpcUnaryPath } from "../transport/rpc/grpc-unary.js";
import { createUnaryCaller, recordingRouter, type RecordedService } from "../transport/rpc/call.js";
import { createRestTranscoder, type NodeRequest, type NodeResponse } from "../transport/rest/transcoder.js";
import type { NodeHandler } from "../transport/http/node-types.js";
import { writeRegistryError } from "../transport/oci/registry-errors.js";
import { migrationsApplied, type Store } from "./open-store.js";
import { createHttpObserver, type RouteNote } from "../telemetry/http-observer.js";
import { createMetricsRoutes } from "../telemetry/metrics-endpoint.js";
import { createMetrics, queryObserver } from "../telemetry/metrics.js";
import type { AuditLog } from "../telemetry/audit-log.js";
import { requestIdKey, requestIdOf } from "../telemetry/request-id.js";
import { withContext } from "../telemetry/tracing.js";

/** Longest a `/readyz` check waits for the store, ms. */
const PROBE_TIMEOUT_MS = 2_000;

/** `/healthz` and `/readyz` ahead of a host's own routes (plain HTTP, no authentication). */
function withProbes<Req extends NodeRequest, Res extends NodeResponse>(probes: Probes, handler: NodeHandler<Req, Res>): NodeHandler<Req, Res> {
  return (req, res) => (probes.handle(req, res) ? undefined : handler(req, res));
}

/**
 * A listener's answer to a request its routes failed to answer (they threw or rejected): the error
 * logged with the request id, then `answer` if nothing was sent yet, else the answer cut short.
 */
function routeFailure(logger: Logger, host: string, answer: (res: NodeResponse) => void): FailureAnswer {
  return (error, req, res) => {
    const path = (req.url ?? "").split("?")[0].slice(0, 256);
    logger.error("a route failed; answered 500", { host, method: req.method, path, error: String(error), stack: (error as Error)?.stack, requestId: requestIdOf(req) });
    if (res.headersSent) cutShort(res);
    else answer(res);
  };
}

export interface PlatformServer {
  api: DualListener;
  registry: DualListener;
  /** The metrics listener (`GET /metrics`), not yet listening: `serve --metrics-port` binds it. */
  metrics: DualListener;
  tokens: TokenService;
  /** The domains' background jobs by name (`reports`, `deliveries`), once `startWork` ran. */
  workers: ReadonlyMap<string, Job>;
  /**
   * Starts the background work (report jobs, event deliveries and pruning). Called once the
   * listeners are bound: a start that fails (a port in use) has changed nothing in the store.
   */
  startWork(): void;
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
 * wire -> gRPC unary path (binary gRPC unary over HTTP/2), Connect unary path (Connect unary POST,
 * uncompressed, size known), else the adapter (or REST transcoder; request decoding, its failures
 * made API errors by `withFrameworkErrorsAsApiErrors`, which the two paths apply as `callError`
 * and answer as the adapter would) -> interceptors (bookkeeping: telemetry -> errors -> deadline or
 * stream shutdown; then authentication -> authorization -> events) -> service handler -> repository.
 * With `audit`, both hosts record every changing call in it (docs/audit-log.md); its owner opens and closes it.
 */
export async function createServer(store: Store, config: ServerConfig, logger: Logger, content: ContentStore, audit?: AuditLog): Promise<PlatformServer> {
  const metrics = createMetrics({ processMetrics: true });
  store.observeQueries(queryObserver(metrics));
  if (store.poolStats) metrics.observePool(store.poolStats);
  if (audit) metrics.observeAuditLog(() => audit.failures);
  // One grants cache for both hosts: a revocation this process writes holds at once on both, another's within a second (grants-cache.ts).
  const grants = createGrantsCache(store.db, { maxAgeMs: GRANTS_MAX_AGE_MS });
  const host = await createApiHost(store, config, logger, metrics, audit, grants);
  const errorDomain = errorDomainOf(config);
  const contextValues = (req: NodeRequest) => createContextValues().set(requestIdKey, requestIdOf(req)).set(connectionKey, req.socket);
  const rpcContextValues = (req: NodeRequest) => contextValues(req).set(protocolKey, protocolOf(req));

  let router: ConnectRouter | undefined;
  const implementations: RecordedService[] = [];
  const adapter = connectNodeAdapter({
    interceptors: host.interceptors,
    readMaxBytes: config.limits.maxBodyBytes,
    jsonOptions: JSON_OPTIONS,
    routes(r) {
      router = r;
      host.routes(recordingRouter(r, implementations));
      r.handlers.forEach((handler, i) => (r.handlers[i] = withFrameworkErrorsAsApiErrors(withMessageJsonAnswers(handler), logger, errorDomain)));
    },
    contextValues: rpcContextValues,
  });
  if (!router) throw new Error("connectNodeAdapter did not build a router");
  /** The RPCs' paths: the adapter answers these; every other request is the fallback's, whose promise the listener catches. */
  const rpcPaths = new Set(router.handlers.map((h) => h.requestPath));

  // What the three direct paths share: the REST transcoder, and the gRPC and Connect unary paths (below).
  const callError = (error: ConnectError, method: DescMethod) => frameworkErrorAsApiError(error, method.input.typeName, logger, errorDomain);
  const direct = { callError, contextValues, maxBodyBytes: config.limits.maxBodyBytes };
  const rest = createRestTranscoder({
    ...direct,
    services: host.services,
    call: createUnaryCaller(implementations, host.interceptors, "rest"),
    registry: createRegistry(...host.files, file_google_rpc_error_details),
    errorDomain,
    onError: (error, req) => logger.error("REST transcoding failed", { error: String(error), requestId: requestIdOf(req) }),
  });
  const discovery = createDiscoveryRoutes(config, host.tokens);
  // Where the token exchange and the login may reach other issuers: one policy for both.
  const issuers: OutboundPolicy = {
    allowHttp: config.upstreamIssuers?.allowHttp ?? false,
    allowPrivateAddresses: config.upstreamIssuers?.allowPrivateAddresses ?? false,
    timeoutMs: config.limits.upstreamFetchTimeoutMs,
    maxBytes: config.limits.upstreamFetchMaxBytes,
  };
  const upstream = createUpstreamKeys(issuers);
  const sts = createStsRoute({ config, tokens: host.tokens, db: store.db, logger, upstream, secrets: host.secrets });
  const login = createLoginRoutes({
    config,
    tokens: host.tokens,
    db: store.db,
    secrets: host.secrets,
    logger,
    outbound: issuers,
  });
  const registryPasswords = createRegistryPasswordRoutes({ config, tokens: host.tokens, db: store.db, audit });
  const docs = createApiDocsRoutes(host.services);
  const consolePages = createConsoleRoutes();

  const observe = createHttpObserver({ host: "api", metrics, logger, spans: true });
  /** Every request that is not an RPC: logged, counted and traced by the route that answered it. */
  function fallback(req: NodeRequest, res: NodeResponse): Promise<void> {
    const note: RouteNote = { route: "discovery" };
    const span = observe(req, res, note);
    return span ? withContext(span, () => answer(req, res, note)) : answer(req, res, note);
  }
  async function answer(req: NodeRequest, res: NodeResponse, note: RouteNote): Promise<void> {
    if (await discovery(req, res)) return;
    note.route = "sts";
    if (await sts(req, res)) return;
    note.route = "login";
    if (await login(req, res)) return;
    note.route = "registry_passwords";
    if (await registryPasswords(req, res)) return;
    note.route = "docs";
    if (await docs(req, res)) return;
    note.route = "console";
    if (await consolePages(req, res)) return;
    note.route = "rest";
    if (await rest(req, res)) return;
    note.route = "not_found";
    sendStatus(res, 404, { code: 5, message: `Not found: no route for ${req.method} ${req.url?.split("?")[0]}` }, errorDomain);
  }

  const probes = createProbes({ ready: () => migrationsApplied(store.db), timeoutMs: PROBE_TIMEOUT_MS });
  // gRPC and Connect unary calls are answered on the request, before the adapter: the same implementations and interceptors.
  const services = implementations.map((r) => r.service);
  const rpc = withGrpcUnaryPath(
    { ...direct, services, call: createUnaryCaller(implementations, host.interceptors, "grpc") },
    withConnectUnaryPath({ ...direct, services, call: createUnaryCaller(implementations, host.interceptors, "connect") }, withSpecGrpcMessage(adapter)),
  );
  const routes: NodeHandler<NodeRequest, Parameters<typeof rpc>[1]> = (req, res) => (rpcPaths.has((req.url ?? "").split("?", 1)[0]) ? rpc(req, res) : fallback(req, res));
  const apiFailure = routeFailure(logger, "api", (res) => sendStatus(res, 500, { code: 13, message: "Internal error" }, errorDomain));
  const api = createDualListener(withProbes(probes, withCors(routes, { allowedOrigins: config.corsOrigins ?? [] }, errorDomain)), config.limits, config.tls, apiFailure);
  const registry = createRegistryHost({ config, logger, db: store.db, tokens: host.tokens, content, grants, metrics, audit, secrets: host.secrets });
  const registryFailure = routeFailure(logger, "registry", (res) => writeRegistryError(res, { status: 500, code: "UNKNOWN", message: "internal error" }));
  const registryHost = createDualListener(withProbes(probes, registry.handler), { ...config.limits, requestTimeoutMs: config.limits.registryRequestTimeoutMs }, config.tls, registryFailure);
  metrics.countBytes(api.server, "api");
  metrics.countBytes(registryHost.server, "registry");
  // Metrics are plain HTTP on their own port, with or without TLS on the hosts.
  const metricsServer = createDualListener(createMetricsRoutes(metrics.registry), config.limits, undefined, routeFailure(logger, "metrics", (res) => res.writeHead(500, { "content-type": "text/plain; charset=utf-8" }).end("metrics collection failed\n")));
  const workerNames = new Map<string, Job>();
  let workers: ReturnType<typeof startJobs> | undefined;
  return {
    api,
    registry: registryHost,
    metrics: metricsServer,
    tokens: host.tokens,
    workers: workerNames,
    startWork() {
      if (workers) return;
      workers = startJobs({ db: store.db, logger }, {
        ...{ tokens: host.tokens, content, events: eventsConfigOf(config), apiUrl: config.apiUrl },
        advisoryFeeds: advisoryFeedsConfigOf(config),
        retention: retentionConfigOf(config),
        scan: scanConfigOf(config),
        feedObserver: {
          synced: (r) => metrics.feedSynced(r.feed, r.result, r.result === "imported" ? r.counts : undefined),
          state: (row) => metrics.feedState(row.url, row.last_success_time, row.last_attempt_time),
        },
      });
      for (const [name, worker] of workers.byName) workerNames.set(name, worker);
    },
    async close() {
      host.setServing(false);
      probes.stopServing();
      host.endStreams();
      await Promise.all([api.close(), registryHost.close(), metricsServer.close(0), workers?.close()]);
    },
  };
}
