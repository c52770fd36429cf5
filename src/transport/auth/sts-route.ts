import { createRegistry } from "@bufbuild/protobuf";
import { bearerToken } from "../http/credentials.js";
import { Code } from "@connectrpc/connect";
import { file_google_rpc_error_details } from "../../../gen/google/rpc/error_details_pb.js";
import { ApiError, errorDomainOf } from "../../aip/errors.js";
import { isRoot, isUidp } from "../../aip/uidp.js";
import { loginConfigOf, type ServerConfig } from "../../config.js";
import { withFields, type Logger } from "../../logger.js";
import type { NodeRequest, NodeResponse } from "../http/node-types.js";
import { BodyRefusedError, readBody } from "../http/body-reader.js";
import type { FieldViolation } from "../../aip/errors.js";
import { invalidArgumentError, sendStatus, writeBodyRefused, writeJson, writeStatus } from "../http/status-json.js";
import { isUnavailable } from "../../store/dialect.js";
import { NotFoundError } from "../../store/errors.js";
import { inTransaction } from "../../store/transaction.js";
import { getIdentity, loginProviderOf, touchLastSeen, type LoginProvider } from "../../domains/iam/index.js";
import { jwtVerify } from "jose";
import type { SecretBox } from "../../store/secret-box.js";
import { admitPerson, issuePersonTokens } from "./login/admit.js";
import type { Kysely } from "kysely";
import type { Database, Db } from "../../domains/kit/schema.js";
import { CLOCK_TOLERANCE_SECONDS, ExchangeRefused, UPSTREAM_ALGORITHMS, verifyForIdentity } from "./exchange.js";
import type { TokenService } from "../../access/tokens.js";
import { UpstreamFetchError, type UpstreamKeys } from "./upstream-keys.js";
import { requestIdOf } from "../../telemetry/request-id.js";
import { readTokenRequest, type TokenRequest } from "./token-request.js";
import { restrictionClaims } from "../../access/token-restriction.js";

export const STS_EXCHANGE_PATH = "/sts/exchange";

/** The exchange's own parameters; `aud`, `cap` and `scope(s)` are every token request's (token-request.ts). */
const OWN_PARAMETERS = ["identity", "identity_provider"];
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
  /** Opens an organization's provider's client secret (loginProviderOf). */
  secrets: SecretBox;
  now?: () => number;
}

/**
 * `POST /sts/exchange`: the workload identity exchange (docs/authorization.md). A plain HTTP
 * route on the API host, like discovery; resolves false for any other path. Answers
 * `{token, expiry}`, `expiry` ISO 8601 UTC with milliseconds as every API time (spec 2).
 */
export function createStsRoute(options: StsRouteOptions) {
  const { config, tokens, db, logger, upstream, secrets } = options;
  const login = loginConfigOf(config);
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
    if (req.method !== "POST" && req.method !== "GET") {
      sendStatus(res, 405, { code: Code.Unimplemented, reason: "METHOD_NOT_ALLOWED", message: `Method ${req.method} is not allowed on ${path}` }, target.domain, { allow: "GET, POST" });
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

    // Parameters: the query and a form body.
    const bodyViolations: FieldViolation[] = [];
    const sources = [new URLSearchParams(query)];
    if (body.byteLength > 0) {
      const type = String(req.headers["content-type"] ?? "").split(";")[0].trim().toLowerCase();
      if (type !== FORM_TYPE) bodyViolations.push({ field: "body", description: `must be ${FORM_TYPE} (or send the parameters in the query)` });
      else sources.push(new URLSearchParams(Buffer.from(body).toString("utf8")));
    }
    const { request, violations } = readTokenRequest(sources, OWN_PARAMETERS, config);
    violations.unshift(...bodyViolations);
    const identityUid = request.own.get("identity") ?? "";
    const providerUid = request.own.get("identity_provider") ?? "";
    if (identityUid === "" && providerUid === "" && !login.issuer) violations.push({ field: "identity", description: "required: the uid of the identity to act as" });
    else if (identityUid !== "" && providerUid !== "") violations.push({ field: "identity_provider", description: "names a person's provider: give identity or identity_provider, not both" });
    else if (identityUid !== "" && (!isUidp(identityUid) || isRoot(identityUid))) violations.push({ field: "identity", description: "must be an identity uid" });
    else if (providerUid !== "" && !isUidp(providerUid)) violations.push({ field: "identity_provider", description: "must be an identity provider uid" });
    if (violations.length > 0) {
      invalid(res, violations);
      return;
    }

    if (identityUid === "") return exchangeForPerson(res, bearer, providerUid, request, logger);

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
    const { audiences: audience, restriction } = request;
    const { token, expiry } = await tokens.issue({ subject: identity.uid, audience, claims: restriction && restrictionClaims(restriction) });
    logger.info("sts exchange", { identity: identity.uid, issuer: claims.iss, subject: claims.sub, audience, ...restriction });
    writeJson(res, 200, JSON.stringify({ token, expiry: expiry.toISOString() }), noStore);
  }

  /**
   * Without `identity`: the bearer is a person's ID token from the server-wide provider, or from
   * the organization's IdentityProvider `identity_provider` (audience its client id), and the answer
   * is that person's own platform token and a refresh token (the hosted RawToken), as a login gives.
   */
  async function exchangeForPerson(res: NodeResponse, bearer: string, providerUid: string, request: TokenRequest, logger: Logger): Promise<void> {
    let provider: { uid: string; issuer: string; clientId: string; organization?: LoginProvider };
    try {
      const organization = providerUid === "" ? undefined : await loginProviderOf(db, secrets, providerUid);
      provider = organization ? { uid: organization.uid, issuer: organization.issuer, clientId: organization.clientId, organization } : { uid: "", issuer: login.issuer, clientId: login.clientId };
    } catch (error) {
      if (!(error instanceof NotFoundError) && !(error instanceof ApiError)) throw error;
      logger.info("sts exchange refused", { identityProvider: providerUid, reason: "no such OIDC identity provider" });
      unauthenticated(res, NO_MATCH);
      return;
    }
    let claims;
    try {
      ({ payload: claims } = await jwtVerify(bearer, upstream.keysFor(provider.issuer), {
        algorithms: UPSTREAM_ALGORITHMS,
        issuer: provider.issuer,
        audience: provider.clientId,
        requiredClaims: ["exp", "sub"],
        clockTolerance: CLOCK_TOLERANCE_SECONDS,
        currentDate: new Date(now()),
      }));
    } catch (error) {
      if (error instanceof UpstreamFetchError) logger.warn("sts exchange refused: the provider's keys could not be fetched", { reason: error.message });
      else if ((error as { code?: string }).code === undefined) throw error;
      else logger.info("sts exchange refused", { identityProvider: provider.uid, reason: String(error) });
      unauthenticated(res, NO_MATCH);
      return;
    }
    const signedIn = await admitPerson(db as Kysely<Database>, provider, claims, now());
    logger.info("sts exchange", { person: signedIn.identityUid, issuer: claims.iss, subject: claims.sub, audience: request.audiences, ...request.restriction });
    writeJson(res, 200, JSON.stringify(await issuePersonTokens(db as Kysely<Database>, tokens, login, request, signedIn, now())), noStore);
  }
}
