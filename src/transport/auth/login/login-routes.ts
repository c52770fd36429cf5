import * as client from "openid-client";
import { Code } from "@connectrpc/connect";
import type { Kysely } from "kysely";
import { ApiError, errorDomainOf } from "../../../aip/errors.js";
import { loginConfigOf, refreshLifetimesOf, type ServerConfig } from "../../../config.js";
import {
  createDeviceLoginStarter,
  deviceLoginOf,
  failLogin,
  finishLogin,
  heldRefreshToken,
  LOGIN_TTL_MS,
  pollDeviceLogin,
  redeemLoginCode,
  redirectDeviceLogin,
  revokeRefreshToken,
  rotateRefreshToken,
  startBrowserLogin,
  takeReturningLogin,
  type Grant,
  type ReturningLogin,
  type SignedIn,
} from "../../../domains/auth/index.js";
import type { Database } from "../../../domains/kit/schema.js";
import { withFields, type Logger } from "../../../logger.js";
import type { OutboundPolicy } from "../../../outbound/fetch.js";
import { isUnavailable } from "../../../store/dialect.js";
import { NotFoundError } from "../../../store/errors.js";
import type { SecretBox } from "../../../store/secret-box.js";
import { requestIdOf } from "../../../telemetry/request-id.js";
import { BodyRefusedError, readBody } from "../../http/body-reader.js";
import { bearerToken } from "../../http/credentials.js";
import type { NodeRequest, NodeResponse } from "../../http/node-types.js";
import { invalidArgumentError, sendStatus, writeJson, writeStatus } from "../../http/status-json.js";
import { createRegistry } from "@bufbuild/protobuf";
import { file_google_rpc_error_details } from "../../../../gen/google/rpc/error_details_pb.js";
import { readTokenRequest } from "../token-request.js";
import type { TokenService } from "../../../access/tokens.js";
import { admitPerson, issuePersonTokens, personAccessToken } from "./admit.js";
import { createDeviceForm, FORM_TOKEN_FIELD } from "./device-form.js";
import { page, redirect } from "./pages.js";
import { causedByOutboundFetch, createProviderClients, ProviderUnreachable, type ProviderClient } from "./provider-clients.js";
import { createProviderRecheck, ProviderUnavailableError } from "./provider-recheck.js";
import { redirectAllowed } from "./redirect-policy.js";

export const LOGIN_PATHS = {
  login: "/auth/v1/login",
  callback: "/auth/v1/callback",
  token: "/auth/v1/token",
  deviceCode: "/auth/v1/device/code",
  device: "/auth/v1/device",
  revoke: "/auth/v1/revoke",
  refresh: "/sts/exchange_refresh_token",
} as const;

const DEVICE_GRANT = "urn:ietf:params:oauth:grant-type:device_code";
const FORM_TYPE = "application/x-www-form-urlencoded";
const noStore = { "cache-control": "no-store", pragma: "no-cache" };
/** RFC 7636 4.2: a S256 challenge is 43 base64url characters. */
const S256_CHALLENGE = /^[A-Za-z0-9_-]{43}$/;
/** RFC 7636 4.1. */
const VERIFIER = /^[A-Za-z0-9._~-]{43,128}$/;
const MAX_CLIENT_STATE = 512;
/** The detail types a Status written here may carry. */
const STATUS_REGISTRY = createRegistry(file_google_rpc_error_details);
/** The reason of every answer about a provider the server cannot use (502, `Retry-After`). */
const PROVIDER_UNREACHABLE = "IDENTITY_PROVIDER_UNREACHABLE";

export interface LoginRoutesOptions {
  config: ServerConfig;
  tokens: TokenService;
  db: Kysely<Database>;
  secrets: SecretBox;
  logger: Logger;
  outbound: OutboundPolicy;
  now?: () => number;
}

/** A request the routes refuse with an OAuth error (RFC 6749 5.2) or, on the browser routes, a Status. */
class Refusal extends Error {
  constructor(
    readonly status: number,
    readonly error: string,
    message: string,
  ) {
    super(message);
  }
}

/**
 * People signing in (docs/authorization.md, "People sign in"): the API host brokers an OIDC
 * authorization code login with PKCE, state and nonce at the person's provider (openid-client), and
 * answers its own clients with a one-time code (browser: RFC 6749 4.1 + RFC 7636, loopback
 * redirects of RFC 8252) or a device grant (RFC 8628), each redeemed at the token endpoint for a
 * platform access token and a rotating refresh token. Plain HTTP routes on the API host, like the
 * token exchange; resolves false for any other path.
 */
export function createLoginRoutes(options: LoginRoutesOptions) {
  const { config, tokens, db, logger } = options;
  const now = options.now ?? Date.now;
  const login = loginConfigOf(config);
  const domain = errorDomainOf(config);
  const callbackUrl = new URL(LOGIN_PATHS.callback, config.apiUrl).toString();
  const providers = createProviderClients({ db, secrets: options.secrets, login, callbackUrl, outbound: options.outbound });
  const recheck = createProviderRecheck({ db, secrets: options.secrets, providers, now });
  const deviceLogins = createDeviceLoginStarter(db, { perClient: config.limits.maxPendingDeviceLoginsPerClient, inAll: config.limits.maxPendingDeviceLogins });
  /** The API's own origin: its console (/console) signs in here. */
  const apiOrigin = new URL(config.apiUrl).origin;
  const deviceForm = createDeviceForm({ apiUrl: config.apiUrl, lifetimeMs: LOGIN_TTL_MS });

  const routes: Record<string, { method: "GET" | "POST" | "GET,POST"; handle: (req: NodeRequest, res: NodeResponse, params: URLSearchParams, log: Logger) => Promise<void> }> = {
    [LOGIN_PATHS.login]: { method: "GET", handle: startLogin },
    [LOGIN_PATHS.callback]: { method: "GET", handle: callback },
    [LOGIN_PATHS.token]: { method: "POST", handle: token },
    [LOGIN_PATHS.deviceCode]: { method: "POST", handle: deviceCode },
    [LOGIN_PATHS.device]: { method: "GET,POST", handle: device },
    [LOGIN_PATHS.revoke]: { method: "POST", handle: revoke },
    [LOGIN_PATHS.refresh]: { method: "GET,POST", handle: refresh },
  };

  return async (req: NodeRequest, res: NodeResponse): Promise<boolean> => {
    const [path, query = ""] = (req.url ?? "").split(/\?(.*)/s, 2);
    const route = routes[path];
    if (!route) return false;
    const log = withFields(logger, { requestId: requestIdOf(req) });
    try {
      if (!route.method.split(",").includes(req.method ?? "")) {
        sendStatus(res, 405, { code: Code.Unimplemented, reason: "METHOD_NOT_ALLOWED", message: `Method ${req.method} is not allowed on ${path}` }, domain, { allow: route.method });
        return true;
      }
      const params = new URLSearchParams(query);
      if (req.method === "POST") for (const [name, value] of await formOf(req)) params.append(name, value);
      await route.handle(req, res, params, log);
    } catch (error) {
      if (res.headersSent) return true;
      if (error instanceof Refusal) oauthError(res, error.status, error.error, error.message);
      else if (error instanceof ApiError) oauthError(res, error.kind === "UNAVAILABLE" ? 503 : 400, "invalid_request", error.message);
      else if (error instanceof NotFoundError) oauthError(res, 400, "invalid_request", "identity_provider names no identity provider");
      else if (isUnavailable(error)) sendStatus(res, 503, { code: Code.Unavailable, message: "the database is busy or unreachable; retry" }, domain, { ...noStore, "retry-after": "1" });
      else if (error instanceof ProviderUnreachable) {
        log.warn("identity provider unreachable", { path, issuer: error.issuer, error: error.message });
        sendStatus(res, 502, { code: Code.Unavailable, reason: PROVIDER_UNREACHABLE, message: error.message }, domain, { ...noStore, "retry-after": "5" });
      }
      else {
        log.error("login route failed", { path, error: String(error) });
        sendStatus(res, 500, { code: Code.Internal, message: "Internal error" }, domain, noStore);
      }
    }
    return true;
  };

  async function formOf(req: NodeRequest): Promise<URLSearchParams> {
    let body: Buffer;
    try {
      body = await readBody(req, config.limits.maxBodyBytes);
    } catch (error) {
      if (error instanceof BodyRefusedError) throw new Refusal(error.reason === "too-large" ? 413 : 400, "invalid_request", "the request body was refused");
      throw error;
    }
    if (body.byteLength === 0) return new URLSearchParams();
    const type = String(req.headers["content-type"] ?? "").split(";")[0].trim().toLowerCase();
    if (type !== FORM_TYPE) throw new Refusal(400, "invalid_request", `the body must be ${FORM_TYPE}`);
    return new URLSearchParams(body.toString("utf8"));
  }

  /** A parameter given at most once; "" when absent. */
  function single(params: URLSearchParams, name: string): string {
    const values = params.getAll(name);
    if (values.length > 1) throw new Refusal(400, "invalid_request", `${name} is given more than once`);
    return values[0] ?? "";
  }

  async function providerOf(params: URLSearchParams): Promise<ProviderClient> {
    const uid = single(params, "identity_provider");
    if (uid === "" && !providers.hasServerWide) {
      throw new Refusal(400, "invalid_request", "this server has no login provider of its own (serve --login-issuer): name an organization's identity_provider");
    }
    return providers.resolve(uid);
  }

  /** Where the provider is sent for a login; the state, nonce and our PKCE verifier are recorded by `record`. */
  async function toProvider(res: NodeResponse, provider: ProviderClient, record: (upstream: { state: string; nonce: string; verifier: string }) => Promise<void>): Promise<void> {
    const upstream = { state: client.randomState(), nonce: client.randomNonce(), verifier: client.randomPKCECodeVerifier() };
    await record(upstream);
    const url = client.buildAuthorizationUrl(provider.config, {
      redirect_uri: callbackUrl,
      scope: provider.scopes,
      state: upstream.state,
      nonce: upstream.nonce,
      code_challenge: await client.calculatePKCECodeChallenge(upstream.verifier),
      code_challenge_method: "S256",
    });
    redirect(res, url.toString());
  }

  async function startLogin(_req: NodeRequest, res: NodeResponse, params: URLSearchParams): Promise<void> {
    const redirectUri = single(params, "redirect_uri");
    const codeChallenge = single(params, "code_challenge");
    const clientState = single(params, "state");
    if (!redirectAllowed(redirectUri, [...login.redirectOrigins, apiOrigin])) {
      throw new Refusal(400, "invalid_request", "redirect_uri must be a loopback address (http://127.0.0.1:<port>/...), this server's own origin, or under an origin the server allows (--login-redirect-origins)");
    }
    if (single(params, "code_challenge_method") !== "S256" || !S256_CHALLENGE.test(codeChallenge)) {
      throw new Refusal(400, "invalid_request", "code_challenge (S256, 43 base64url characters) and code_challenge_method=S256 are required");
    }
    if (clientState === "" || clientState.length > MAX_CLIENT_STATE) throw new Refusal(400, "invalid_request", `state is required (at most ${MAX_CLIENT_STATE} characters)`);
    const provider = await providerOf(params);
    await toProvider(res, provider, (upstream) =>
      startBrowserLogin(db, { providerUid: provider.uid, redirectUri, clientState, codeChallenge, upstream }, now()),
    );
  }

  async function callback(req: NodeRequest, res: NodeResponse, params: URLSearchParams, log: Logger): Promise<void> {
    const state = single(params, "state");
    const returning = await takeReturningLogin(db, state, now());
    if (!returning) {
      page(res, 400, "Sign-in failed", "This sign-in link is unknown, expired or was already used. Start again from your application.");
      return;
    }
    let signedIn: SignedIn;
    try {
      signedIn = await signIn(returning, new URL(req.url ?? "", callbackUrl), state);
    } catch (error) {
      const unreachable = error instanceof ProviderUnreachable;
      const description = error instanceof ApiError || unreachable ? error.message : "the identity provider's answer did not verify";
      log[unreachable ? "warn" : "info"]("login refused", { provider: returning.providerUid, reason: String(error) });
      await failLogin(db, returning, description);
      if (returning.kind === "browser") redirect(res, withQuery(returning.redirectUri, { error: unreachable ? "temporarily_unavailable" : "access_denied", error_description: description, state: returning.clientState }));
      else page(res, unreachable ? 502 : 403, "Sign-in failed", `${description}. Return to your terminal and try again.`);
      return;
    }
    const { code } = await finishLogin(db, returning, signedIn, now());
    log.info("login", { provider: returning.providerUid, identity: signedIn.identityUid, kind: returning.kind });
    if (code !== undefined) redirect(res, withQuery(returning.redirectUri, { code, state: returning.clientState }));
    else page(res, 200, "Signed in", "You are signed in. Return to your terminal: it continues on its own.");
  }

  /** Completes the code exchange at the provider and verifies its ID token, then finds or admits the person. */
  async function signIn(returning: ReturningLogin, currentUrl: URL, state: string): Promise<SignedIn> {
    const provider = await providers.resolve(returning.providerUid);
    const answer = await client
      .authorizationCodeGrant(provider.config, currentUrl, {
        pkceCodeVerifier: returning.upstreamVerifier,
        expectedState: state,
        expectedNonce: returning.nonce,
        idTokenExpected: true,
      })
      .catch((error: unknown) => {
        throw causedByOutboundFetch(error) ? new ProviderUnreachable(provider.config.serverMetadata().issuer, error) : error;
      });
    const claims = answer.claims();
    if (!claims) throw new Error("the provider answered no ID token");
    const signedIn = await admitPerson(db, provider, claims, now());
    // Kept, sealed, for the refreshes of this login to ask the provider again.
    return answer.refresh_token ? { ...signedIn, upstreamRefreshToken: options.secrets.seal(answer.refresh_token) } : signedIn;
  }

  async function answerTokens(res: NodeResponse, signedIn: SignedIn): Promise<void> {
    writeJson(res, 200, JSON.stringify(await issuePersonTokens(db, tokens, login, { audiences: [config.apiUrl] }, signedIn, now())), noStore);
  }

  async function token(_req: NodeRequest, res: NodeResponse, params: URLSearchParams, log: Logger): Promise<void> {
    const grantType = single(params, "grant_type");
    let grant: Grant;
    if (grantType === "authorization_code") {
      const verifier = single(params, "code_verifier");
      if (!VERIFIER.test(verifier)) throw new Refusal(400, "invalid_request", "code_verifier is required (RFC 7636: 43 to 128 characters)");
      grant = await redeemLoginCode(db, { code: single(params, "code"), verifier, redirectUri: single(params, "redirect_uri") }, now());
    } else if (grantType === DEVICE_GRANT) {
      grant = await pollDeviceLogin(db, single(params, "device_code"), now());
    } else {
      throw new Refusal(400, "unsupported_grant_type", `grant_type must be authorization_code or ${DEVICE_GRANT}`);
    }
    if ("error" in grant) {
      if (grant.error !== "authorization_pending" && grant.error !== "slow_down") log.info("login token refused", { reason: grant.description });
      throw new Refusal(400, grant.error, grant.description);
    }
    await answerTokens(res, grant.signedIn);
  }

  /**
   * RFC 8628 3.1: a device code for an unauthenticated terminal. Beyond the pending device logins
   * a client address (its connection's peer) or the server may hold, 429 `slow_down` with
   * `Retry-After`: the seconds until the first of them expires.
   */
  async function deviceCode(req: NodeRequest, res: NodeResponse, params: URLSearchParams, log: Logger): Promise<void> {
    const provider = await providerOf(params);
    const clientAddress = req.socket?.remoteAddress ?? "";
    const started = await deviceLogins.start(provider.uid, clientAddress, now());
    if ("tooMany" in started) {
      log.info("device login refused", { reason: started.tooMany === "client" ? "too many pending for the client address" : "too many pending in all", clientAddress });
      const whose = started.tooMany === "client" ? "this address has" : "the server has";
      writeJson(
        res,
        429,
        JSON.stringify({ error: "slow_down", error_description: `${whose} too many device logins waiting to be confirmed; retry in ${started.retryAfterSeconds} s` }),
        noStore,
        { "retry-after": String(started.retryAfterSeconds) },
      );
      return;
    }
    const verificationUri = new URL(LOGIN_PATHS.device, config.apiUrl).toString();
    writeJson(
      res,
      200,
      JSON.stringify({
        device_code: started.deviceCode,
        user_code: started.userCode,
        verification_uri: verificationUri,
        verification_uri_complete: withQuery(verificationUri, { user_code: started.userCode }),
        expires_in: started.expiresIn,
        interval: started.interval,
      }),
      noStore,
    );
  }

  /**
   * The page a person opens from the terminal: with a waiting code, its confirmation (GET), then
   * the sign-in at its provider (POST from that page, device-form.ts); without one, a form to type
   * the code, which looks it up (GET).
   */
  async function device(req: NodeRequest, res: NodeResponse, params: URLSearchParams): Promise<void> {
    const userCode = single(params, "user_code");
    const waiting = userCode === "" ? undefined : await deviceLoginOf(db, userCode, now());
    const title = "Sign in to a terminal";
    if (!waiting) {
      const problem = userCode === "" ? "" : "That code is unknown, expired or already used.";
      page(res, problem ? 400 : 200, title, `${problem} Type the code your terminal shows.`, { kind: "lookup", action: LOGIN_PATHS.device });
      return;
    }
    if (req.method === "GET") {
      const provider = await providers.resolve(waiting.providerUid);
      const { token, headers } = deviceForm.issue(req);
      const providerOrigin = new URL(provider.config.serverMetadata().authorization_endpoint ?? provider.config.serverMetadata().issuer).origin;
      const form = { kind: "confirm", action: LOGIN_PATHS.device, userCode, formToken: token, providerOrigin } as const;
      page(res, 200, title, "Confirm the code your terminal shows; only continue if you started this sign-in.", form, headers);
      return;
    }
    if (!deviceForm.fromOwnPage(req, single(params, FORM_TOKEN_FIELD))) {
      page(res, 403, title, "Confirm the code on this server's own page: open the address your terminal shows.");
      return;
    }
    const provider = await providers.resolve(waiting.providerUid);
    await toProvider(res, provider, async (upstream) => {
      if (!(await redirectDeviceLogin(db, waiting.uid, upstream))) throw new Refusal(400, "invalid_grant", "this code was already confirmed");
    });
  }

  async function revoke(_req: NodeRequest, res: NodeResponse, params: URLSearchParams): Promise<void> {
    await revokeRefreshToken(db, single(params, "token"), now());
    writeJson(res, 200, "{}", noStore);
  }

  /**
   * The hosted `POST /sts/exchange_refresh_token`: `Authorization: Bearer <refresh token>` →
   * TokenPair, once the person's provider was asked again (`createProviderRecheck`): a session it
   * ends is 401 and its family revoked; a provider that cannot be asked is 502 with nothing spent.
   */
  async function refresh(req: NodeRequest, res: NodeResponse, params: URLSearchParams, log: Logger): Promise<void> {
    // `aud`, `cap` and `scope(s)` choose the access token's audiences and narrow it (token-request.ts); nothing else is taken.
    const { request, violations } = readTokenRequest([params], [], config);
    if (violations.length > 0) {
      writeStatus(res, 400, invalidArgumentError(violations), { registry: STATUS_REGISTRY, domain }, noStore);
      return;
    }
    const presented = bearerToken(req.headers.authorization);
    if (presented === undefined) {
      sendStatus(res, 401, { code: Code.Unauthenticated, message: "Unauthenticated: the request needs `Authorization: Bearer <refresh token>`" }, domain, noStore);
      return;
    }
    const refused = (reason: string) => {
      log.info("refresh refused", { reason });
      sendStatus(res, 401, { code: Code.Unauthenticated, message: "Unauthenticated: the refresh token is not valid; sign in again" }, domain, { ...noStore, "www-authenticate": 'Bearer error="invalid_token"' });
    };
    const held = await heldRefreshToken(db, presented, now());
    if ("refused" in held) return refused(held.refused);
    let verdict;
    try {
      verdict = await recheck(held.signedIn);
    } catch (error) {
      if (!(error instanceof ProviderUnavailableError)) throw error;
      log.warn("refresh deferred: the identity provider could not be asked", { provider: held.signedIn.person.idp, reason: error.message });
      const message = `the identity provider ${held.signedIn.person.iss} could not be asked; nothing was spent, retry`;
      sendStatus(res, 502, { code: Code.Unavailable, reason: PROVIDER_UNREACHABLE, message }, domain, { ...noStore, "retry-after": "5" });
      return;
    }
    if ("ended" in verdict) {
      await revokeRefreshToken(db, presented, now());
      return refused(`the provider ended the session: ${verdict.ended}`);
    }
    const lifetimes = refreshLifetimesOf(login, verdict.signedIn.person.idp !== "");
    const rotation = await rotateRefreshToken(db, presented, lifetimes, now(), verdict.signedIn);
    if ("refused" in rotation) return refused(rotation.refused);
    const { signedIn, next } = rotation;
    const access = await personAccessToken(tokens, login, request, signedIn);
    writeJson(
      res,
      200,
      JSON.stringify({ token: { token: access.token, expiry: access.expiry.toISOString() }, refreshToken: { token: next.token, expiry: new Date(next.expiry).toISOString() } }),
      noStore,
    );
  }

  function oauthError(res: NodeResponse, status: number, error: string, description: string): void {
    writeJson(res, status, JSON.stringify({ error, error_description: description }), noStore);
  }
}

function withQuery(base: string, params: Record<string, string>): string {
  const url = new URL(base);
  for (const [name, value] of Object.entries(params)) url.searchParams.set(name, value);
  return url.toString();
}
