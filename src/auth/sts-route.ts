import { createRegistry } from "@bufbuild/protobuf";
import { bearerToken, sameUrl } from "../transport/http/credentials.js";
import { Code } from "@connectrpc/connect";
import { file_google_rpc_error_details } from "../../gen/google/rpc/error_details_pb.js";
import { errorDomainOf } from "../aip/errors.js";
import { isRoot, isUidp } from "../aip/uidp.js";
import type { ServerConfig } from "../config.js";
import { withFields, type Logger } from "../logger.js";
import type { NodeRequest, NodeResponse } from "../transport/http/node-types.js";
import { BodyRefusedError, readBody } from "../transport/http/body-reader.js";
import type { FieldViolation } from "../aip/errors.js";
import { invalidArgumentError, sendStatus, writeBodyRefused, writeJson, writeStatus } from "../transport/http/status-json.js";
import { isUnavailable } from "../store/dialect.js";
import { NotFoundError } from "../store/errors.js";
import { inTransaction } from "../store/transaction.js";
import { getIdentity, touchLastSeen } from "../domains/iam/index.js";
import type { Kysely } from "kysely";
import type { Database, Db } from "../domains/schema.js";
import { ExchangeRefused, verifyForIdentity } from "./exchange.js";
import type { TokenService } from "./tokens.js";
import { UpstreamFetchError, type UpstreamKeys } from "./upstream-keys.js";
import { requestIdOf } from "../telemetry/request-id.js";

export const STS_EXCHANGE_PATH = "/sts/exchange";

const PARAMETERS = new Set(["identity", "aud"]);
const FORM_TYPE = "application/x-www-form-urlencoded";
/** The one answer for every token that does not make the caller the identity: it tells nothing about which identities exist. */
const NO_MATCH = "Unauthenticated: the token does not match the identity";
const registry = createRegistry(file_google_rpc_error_details);
const noStore = { "cache-control": "no-store", pragma: "no-cache" };

export interface StsRouteOptions {
  config: ServerConfig;
  tokens: TokenService;
  db: Db;
  logger: Logger;
  upstream: UpstreamKeys;
  now?: () => number;
}

/**
 * `POST /sts/exchange`: the workload identity exchange (docs/authorization.md). A plain HTTP
 * route on the API host, like discovery; resolves false for any other path. Answers
 * `{token, expiry}`, `expiry` ISO 8601 UTC with milliseconds as every API time (spec 2).
 */
export function createStsRoute(options: StsRouteOptions) {
  const { config, tokens, db, logger, upstream } = options;
  const now = options.now ?? Date.now;
  const target = { registry, domain: errorDomainOf(config) };

  const unauthenticated = (res: NodeResponse, message: string) =>
    sendStatus(res, 401, { code: Code.Unauthenticated, message }, target.domain, { ...noStore, "www-authenticate": 'Bearer error="invalid_token"' });
  const invalid = (res: NodeResponse, violations: FieldViolation[]) => writeStatus(res, 400, invalidArgumentError(violations), target, noStore);

  return async (req: NodeRequest, res: NodeResponse): Promise<boolean> => {
    const [path, query = ""] = (req.url ?? "").split(/\?(.*)/s, 2);
    if (path !== STS_EXCHANGE_PATH) return false;
    const log = withFields(logger, { requestId: requestIdOf(req) });
    try {
      await handle(req, res, path, query, log);
    } catch (error) {
      if (isUnavailable(error)) {
        log.warn("sts exchange: the store is busy or unreachable", { error: String(error) });
        if (!res.headersSent) sendStatus(res, 503, { code: Code.Unavailable, message: "the database is busy or unreachable; retry" }, target.domain, { ...noStore, "retry-after": "1" });
        return true;
      }
      log.error("sts exchange failed", { error: String(error) });
      if (!res.headersSent) sendStatus(res, 500, { code: Code.Internal, message: "Internal error" }, target.domain, noStore);
    }
    return true;
  };

  async function handle(req: NodeRequest, res: NodeResponse, path: string, query: string, logger: Logger): Promise<void> {
    if (req.method !== "POST") {
      sendStatus(res, 405, { code: Code.Unimplemented, reason: "METHOD_NOT_ALLOWED", message: `Method ${req.method} is not allowed on ${path}` }, target.domain, { allow: "POST" });
      return;
    }

    let body: Uint8Array;
    try {
      body = await readBody(req, config.limits.maxBodyBytes);
    } catch (error) {
      if (!(error instanceof BodyRefusedError)) throw error;
      return writeBodyRefused(req, res, error, target);
    }

    const header = req.headers.authorization;
    const bearer = bearerToken(header);
    if (bearer === undefined) {
      unauthenticated(res, "Unauthenticated: the request needs `Authorization: Bearer <token of another OIDC issuer>`");
      return;
    }

    // Parameters: the query and a form body, each at most once.
    const violations: FieldViolation[] = [];
    const params = new Map<string, string>();
    const sources = [new URLSearchParams(query)];
    if (body.byteLength > 0) {
      const type = String(req.headers["content-type"] ?? "").split(";")[0].trim().toLowerCase();
      if (type !== FORM_TYPE) violations.push({ field: "body", description: `must be ${FORM_TYPE} (or send the parameters in the query)` });
      else sources.push(new URLSearchParams(Buffer.from(body).toString("utf8")));
    }
    for (const source of sources) {
      for (const [name, value] of source) {
        if (!PARAMETERS.has(name)) violations.push({ field: name, description: "unknown parameter (expected identity and aud)" });
        else if (params.has(name)) violations.push({ field: name, description: "given more than once" });
        else params.set(name, value);
      }
    }
    const identityUid = params.get("identity") ?? "";
    if (identityUid === "") violations.push({ field: "identity", description: "required: the uid of the identity to act as" });
    else if (!isUidp(identityUid) || isRoot(identityUid)) violations.push({ field: "identity", description: "must be an identity uid" });
    const requested = params.get("aud") ?? config.apiUrl;
    const audience = [config.apiUrl, config.registryUrl].find((url) => sameUrl(url, requested));
    if (audience === undefined) violations.push({ field: "aud", description: `must be ${config.apiUrl} or ${config.registryUrl}` });
    if (violations.length > 0) {
      invalid(res, violations);
      return;
    }

    let identity;
    try {
      identity = await getIdentity(db, identityUid);
    } catch (error) {
      if (!(error instanceof NotFoundError)) throw error;
      logger.info("sts exchange refused", { identity: identityUid, reason: "no such identity" });
      unauthenticated(res, NO_MATCH);
      return;
    }

    let claims;
    try {
      claims = await verifyForIdentity(bearer, identity, upstream, now());
    } catch (error) {
      if (error instanceof ExchangeRefused) {
        logger.info("sts exchange refused", { identity: identityUid, reason: error.reason });
      } else if (error instanceof UpstreamFetchError) {
        logger.warn("sts exchange refused: the upstream issuer's keys could not be fetched", { identity: identityUid, reason: error.message });
      } else {
        throw error;
      }
      unauthenticated(res, NO_MATCH);
      return;
    }

    // When the identity was last seen is bookkeeping: a store too busy to record it refuses no exchange.
    // In a transaction, so a lock held on identities bounds its wait (lock_timeout on PostgreSQL).
    await inTransaction(db as Kysely<Database>, undefined, (trx) => touchLastSeen(trx, identity.uid, now())).catch((error: unknown) => {
      if (!isUnavailable(error)) throw error;
      logger.warn("sts exchange: last seen time not recorded", { identity: identity.uid, error: String(error) });
    });
    const { token, expiry } = await tokens.issue({ subject: identity.uid, audience: audience! });
    logger.info("sts exchange", { identity: identity.uid, issuer: claims.iss, subject: claims.sub, audience });
    writeJson(res, 200, JSON.stringify({ token, expiry: expiry.toISOString() }), noStore);
  }
}
