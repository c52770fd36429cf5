import { randomBytes } from "node:crypto";
import type { DescFile, DescService } from "@bufbuild/protobuf";
import type { ConnectRouter, Interceptor } from "@connectrpc/connect";
import { errorDomainOf } from "../aip/errors.js";
import { createPager } from "../aip/pagination.js";
import { createTokenService, type TokenService } from "../access/tokens.js";
import { prepareStore } from "./bootstrap.js";
import { eventsConfigOf, upstreamRegistriesConfigOf, type ServerConfig } from "../config.js";
import { createGrantsCache, GRANTS_MAX_AGE_MS, type GrantsCache } from "../domains/iam/index.js";
import { authenticationInterceptor } from "../interceptors/authentication-interceptor.js";
import { authorizationInterceptor } from "../interceptors/authorization-interceptor.js";
import { eventInterceptor } from "../interceptors/event-interceptor.js";
import { bookkeepingInterceptor } from "../interceptors/bookkeeping-interceptor.js";
import { createStreamShutdown } from "../interceptors/stream-shutdown.js";
import type { Logger } from "../logger.js";
import type { ServiceDeps } from "../domains/kit/deps.js";
import { API_FILES, API_SERVICES, DOMAINS, OWNERSHIP } from "./domains.js";
import { registerHealth, type HealthControl } from "../system/health-service.js";
import { registerReflection } from "../system/reflection-service.js";
import { serverSecret } from "../store/server-keys.js";
import { createSecretBox, newSecretsKey, SECRETS_KEY_NAME, type SecretBox } from "../store/secret-box.js";
import { storeAnswers } from "../store/store.js";
import { type Store } from "./open-store.js";
import { createMetrics, type Metrics } from "../telemetry/metrics.js";
import type { AuditLog } from "../telemetry/audit-log.js";


/** The RPC side of the API host, independent of any listener (in-process tests use it directly). */
export interface ApiHost {
  /** Registers every service on a router. */
  routes(router: ConnectRouter): void;
  /** The interceptor chain, outermost first. */
  interceptors: Interceptor[];
  services: DescService[];
  files: DescFile[];
  tokens: TokenService;
  /** Seals and opens secrets kept at rest. */
  secrets: SecretBox;
  /** Reports NOT_SERVING on gRPC health from now on (shutdown). */
  setServing(serving: boolean): void;
  /** Ends streaming calls (shutdown); unary calls are unaffected. */
  endStreams(): void;
}

/**
 * `metrics`: where the calls are counted (the server's registry); by default a registry of the host's own.
 * `audit`: where changing calls are recorded; by default nowhere.
 * `grants`: the callers' grants, shared with the registry host when the server builds both; by default a cache of the host's own.
 */
export async function createApiHost(
  store: Store,
  config: ServerConfig,
  logger: Logger,
  metrics: Metrics = createMetrics(),
  audit?: AuditLog,
  grants: GrantsCache = createGrantsCache(store.db, { maxAgeMs: GRANTS_MAX_AGE_MS }),
): Promise<ApiHost> {
  const now = Date.now;
  await prepareStore(store, now());
  const tokens = await createTokenService(store.db, config.apiUrl, now);
  const pageSecret = await serverSecret(store.db, "page-token-key", () => randomBytes(32).toString("base64url"), now());
  const secrets = createSecretBox(Buffer.from(await serverSecret(store.db, SECRETS_KEY_NAME, newSecretsKey, now()), "base64url"));
  const deps: ServiceDeps = {
    db: store.db,
    pager: createPager({ secret: Buffer.from(pageSecret, "base64url"), now }),
    tokens,
    now,
    organizationCreation: config.organizationCreation ?? "bootstrap",
    ownership: OWNERSHIP,
    events: eventsConfigOf(config),
    allowHttpIssuers: config.upstreamIssuers?.allowHttp ?? false,
    upstreamRegistries: upstreamRegistriesConfigOf(config),
    secrets,
  };
  const health: HealthControl[] = [];
  const streams = createStreamShutdown();
  let serving = true;

  return {
    files: API_FILES,
    services: API_SERVICES,
    tokens,
    secrets,
    endStreams: streams.endStreams,
    interceptors: [
      bookkeepingInterceptor({ logger, metrics, audit, errorDomain: errorDomainOf(config), maxCallMs: config.limits.requestTimeoutMs, streams }),
      authenticationInterceptor(tokens, grants, config.apiUrl),
      authorizationInterceptor(),
      eventInterceptor({ typePrefix: deps.events.typePrefix, now }),
    ],
    routes(router) {
      for (const domain of DOMAINS) for (const binding of domain.services) binding.register(router, deps);
      registerReflection(router, API_FILES);
      const control = registerHealth(router, {
        services: API_SERVICES.map((s) => s.typeName),
        check: () => storeAnswers(store.db),
      });
      control.setServing(serving);
      health.push(control);
    },
    setServing(value) {
      serving = value;
      for (const control of health) control.setServing(value);
    },
  };
}
