import type { Kysely } from "kysely";
import type { TokenService } from "../../access/tokens.js";
import type { ServerConfig } from "../../config.js";
import type { Logger } from "../../logger.js";
import type { AuditLog } from "../../telemetry/audit-log.js";
import { createHttpObserver } from "../../telemetry/http-observer.js";
import { createMetrics, type Metrics } from "../../telemetry/metrics.js";
import { requestIdOf } from "../../telemetry/request-id.js";
import { withContext } from "../../telemetry/tracing.js";
import { writeJson } from "../http/status-json.js";
import type { Database } from "../../domains/kit/schema.js";
import { eventsConfigOf, upstreamRegistriesConfigOf } from "../../config.js";
import type { GrantsCache } from "../../domains/iam/index.js";
import { handleCatalog } from "./catalog-endpoint.js";
import type { RegistryContext, RegistryNote, RegistryRequest, RegistryResponse } from "./context.js";
import { createPullThroughParts, pullThroughRepository, type ContentStore } from "../../domains/registry/index.js";
import type { SecretBox } from "../../store/secret-box.js";
import { authorizePing } from "./registry-auth.js";
import { fail, failureAnswer, REGISTRY_VERSION_HEADERS, writeRegistryError } from "./registry-errors.js";
import { answerOnRepository, REPOSITORY_ROUTES } from "./repository-routes.js";
import { handleToken } from "./token-endpoint.js";

export interface RegistryHostOptions {
  config: ServerConfig;
  logger: Logger;
  db: Kysely<Database>;
  tokens: TokenService;
  content: ContentStore;
  /** IAM's grants cache, the one the API host's authentication asks (built once per process). */
  grants: GrantsCache;
  /** Where requests are counted (the server's registry); by default a registry of the host's own. */
  metrics?: Metrics;
  /** Where changes are recorded (push, deletes, mounts, a pull token's use); by default nowhere. */
  audit?: AuditLog;
  now?: () => number;
  /** Opens the upstreams' sealed passwords; without it, nothing is pulled through. */
  secrets?: SecretBox;
}


/**
 * The registry host (its own listener): the API version check `GET /v2/`, the token
 * endpoint `GET /token`, Tag History `GET /v2/<org>/<image>/_service/history/<tag>`, and
 * the OCI Distribution API (blobs, uploads, manifests, tags, referrers, the catalog). Every error is in
 * the registry's JSON format `{"errors":[{code,message,detail}]}`. Each request is logged with its
 * caller, counted by route and traced (`createHttpObserver`); each change an endpoint notes
 * (`RegistryNote.change`) made by a known caller is one line of the audit log, with `OK` or the
 * OCI error code it was refused with (`CANCELED` when the client went away first).
 */
export function createRegistryHost(options: RegistryHostOptions) {
  const { logger, config, audit } = options;
  const now = options.now ?? Date.now;
  const parts = { db: options.db, content: options.content, now, eventTypePrefix: eventsConfigOf(config).typePrefix };
  const metrics = options.metrics ?? createMetrics();
  const upstreams = upstreamRegistriesConfigOf(config);
  const pullThrough =
    options.secrets &&
    createPullThroughParts({
      secrets: options.secrets,
      policy: {
        allowHttp: upstreams.allowHttp,
        allowPrivateAddresses: upstreams.allowPrivateAddresses,
        relaxedBy: { http: "serve --allow-http-upstreams", privateAddresses: "serve --allow-private-upstreams" },
        timeoutMs: upstreams.timeoutMs,
      },
      maxBlobBytes: config.limits.maxBlobBytes,
      now,
      onFallback: (upstream) => metrics.upstreamFallback(upstream),
    });
  const shared: Omit<RegistryContext, "note"> = {
    config,
    db: options.db,
    tokens: options.tokens,
    content: options.content,
    grants: options.grants,
    repository: (name) => pullThroughRepository(parts, pullThrough, name),
    maxBlobBytes: config.limits.maxBlobBytes,
    now,
    metrics,
  };

  const observe = createHttpObserver({ host: "registry", metrics, logger, spans: true, callers: true });
  const audited = (req: RegistryRequest, { change, actor }: RegistryNote, outcome: string) => {
    if (audit && change && actor) audit.write({ host: "registry", ...change, outcome, actor, requestId: requestIdOf(req) });
  };
  /** Answers every error a route throws; a promise that rejects is left for the listener's catch (a failure in this answering). */
  const handler = (req: RegistryRequest, res: RegistryResponse): Promise<void> => {
    const note: RegistryNote = { route: "unknown" };
    const ctx: RegistryContext = { ...shared, note };
    const span = observe(req, res, note);
    const answer = () => route(ctx, req, res);
    return (span ? withContext(span, answer) : answer()).then(() => audited(req, note, "OK"), (error: unknown) => {
      const { error: reply, refused, log } = failureAnswer(error);
      audited(req, note, reply?.code ?? "CANCELED");
      if (reply === undefined) return void res.destroy(); // the client is gone: nothing to answer or log
      if (refused) {
        req.resume(); // an unread body must not stall the connection
        writeRegistryError(res, reply);
        return;
      }
      if (log !== undefined) {
        const stack = log.stack ? { stack: (error as Error).stack } : {};
        logger[log.level](log.message, { error: String(error), ...stack, requestId: requestIdOf(req) });
      }
      if (!res.headersSent) writeRegistryError(res, reply);
      else res.destroy();
    });
  };

  /** Answers a request; writes the name of the route that answers it in its note. */
  async function route(ctx: RegistryContext, req: RegistryRequest, res: RegistryResponse): Promise<void> {
    const { note } = ctx;
    const [path = "", queryText = ""] = (req.url ?? "").split(/\?(.*)/s, 2);
    const query = new URLSearchParams(queryText);
    const method = req.method ?? "GET";
    if (path === "/v2/" || path === "/v2") {
      note.route = "version";
      allow(method, path, ["GET", "HEAD"]);
      await authorizePing(ctx, req);
      writeJson(res, 200, "{}", REGISTRY_VERSION_HEADERS);
      return;
    }
    if (path === "/v2/_catalog") {
      note.route = "catalog";
      allow(method, path, ["GET", "HEAD"]);
      await handleCatalog(ctx, req, res, query);
      return;
    }
    if (path === "/token") {
      note.route = "token";
      allow(method, path, ["GET", "HEAD"]);
      await handleToken(ctx, req, res, query);
      return;
    }
    for (const { name, match, methods } of REPOSITORY_ROUTES) {
      const matched = match(path);
      if (matched === undefined) continue;
      note.route = name;
      allow(method, path, Object.keys(methods));
      await answerOnRepository(ctx, req, res, methods[method], matched, query);
      return;
    }
    fail(404, "NAME_UNKNOWN", "no such registry route", { path: path.slice(0, 256) });
  }

  return { handler };
}

function allow(method: string, path: string, methods: string[]): void {
  if (!methods.includes(method)) fail(405, "UNSUPPORTED", `method ${method} is not allowed on ${path.slice(0, 256)}`, null, { allow: methods.join(", ") });
}
