import type { NodeRequest, NodeResponse } from "../http/node-types.js";
import { bearerToken } from "../http/credentials.js";
import { writeJson } from "../http/status-json.js";
import { acceptPullToken, getIdentity } from "../../domains/iam/index.js";
import { acceptRegistryPassword, isRegistryPassword } from "../../domains/auth/index.js";
import type { RegistryContext } from "./context.js";
import { ACTION_CAPABILITIES, ANONYMOUS_SUBJECT, CATALOG_ENTRY, CREATE_BY_PUSH, grant, identityCaller, PULL_TOKEN_CLAIM, REGISTRY_PASSWORD_CLAIM, type AccessEntry, type Caller } from "./grant.js";
import { bearerChallenge, fail, NO_STORE, REGISTRY_VERSION_HEADERS, RegistryFailure } from "./registry-errors.js";
import { restrictionClaims, restrictionOf, type TokenRestriction } from "../../access/token-restriction.js";
import { isUidp } from "../../aip/uidp.js";
import { ExchangeRefused, verifyForIdentity } from "../auth/exchange.js";
import { NotFoundError } from "../../store/errors.js";
import { DELETE, isCatalogScope, parseScope, PULL, PUSH, repositoryScope, type Action } from "./scope.js";

/** Registry tokens live 5 minutes: long enough for a pull, short enough that a revoked binding stops working soon. */
export const REGISTRY_TOKEN_TTL_SECONDS = 300;
/** Most scopes one token request may ask for. */
export const MAX_SCOPES = 8;
/** The longest signed password (a JWT) read: far above a static key's token, far below a header's bound. */
const MAX_SIGNED_PASSWORD = 8192;

/**
 * What a person's registry password may do: pull and push (creating a repository by its first push),
 * within the person's role bindings; nothing else of theirs (deleting tags, the API).
 */
const REGISTRY_PASSWORD_RESTRICTION: TokenRestriction = { caps: [...new Set([...ACTION_CAPABILITIES.pull, ...ACTION_CAPABILITIES.push, ...CREATE_BY_PUSH])] };

/** What a request to `/token` authenticates with: a platform token (as a Bearer token or Basic's password), or a pull token's or registry password's username and password. */
type Credential = { token: string; via: "bearer" | "basic" } | { username: string; password: string };

const CREDENTIALS_EXPECTED =
  "credentials must be `Bearer <platform token>`, Basic with user _token and a platform token as password, or Basic with a pull token's or a registry password's username and password";

/** The credential a request to `/token` carries, or undefined for an anonymous call. Throws 401 for a malformed header. */
function credentialOf(req: NodeRequest, registryUrl: string): Credential | undefined {
  const header = req.headers.authorization;
  if (header === undefined || header === "") return undefined;
  const value = String(header).trim();
  const bearer = bearerToken(value);
  if (bearer !== undefined) return { token: bearer, via: "bearer" };
  const basic = /^Basic\s+([A-Za-z0-9+/=_-]+)$/i.exec(value);
  if (basic) {
    const decoded = Buffer.from(basic[1], "base64").toString("utf8");
    const colon = decoded.indexOf(":");
    const [user, password] = [decoded.slice(0, colon), decoded.slice(colon + 1)];
    if (colon > 0 && password !== "") return user === "_token" ? { token: password, via: "basic" } : { username: user, password };
  }
  fail(401, "UNAUTHORIZED", CREDENTIALS_EXPECTED, null, { "www-authenticate": bearerChallenge(registryUrl, { error: "invalid_token" }) });
}

/**
 * Who asks, and for a pull token or a registry password until when its registry tokens may live. Notes the kind of
 * credential and, once verified, its subject as the request's actor (`ctx.note`).
 */
async function callerOf(ctx: RegistryContext, req: NodeRequest, challengeScope: string | undefined): Promise<CallerOf> {
  const { config, tokens, db, note } = ctx;
  const credential = credentialOf(req, config.registryUrl);
  note.credential = credential === undefined ? "none" : "username" in credential ? (isRegistryPassword(credential.password) ? "registry_password" : "pull_token") : credential.via;
  if (credential === undefined) {
    note.actor = { subject: ANONYMOUS_SUBJECT };
    return { caller: { subject: ANONYMOUS_SUBJECT } };
  }
  const invalid = { "www-authenticate": bearerChallenge(config.registryUrl, { scope: challengeScope, error: "invalid_token" }) };
  if ("username" in credential && isRegistryPassword(credential.password)) {
    // A person's registry password: their identity, narrowed to pulling and pushing; 401 at once once revoked or expired.
    const accepted = await acceptRegistryPassword(db, credential.username, credential.password, ctx.now());
    if (accepted === undefined) fail(401, "UNAUTHORIZED", "the registry password is unknown, revoked or expired, or not the username's", null, invalid);
    note.actor = { subject: accepted.identity };
    const restriction = REGISTRY_PASSWORD_RESTRICTION;
    return { caller: await identityCaller(ctx.grants, accepted.identity, invalid, restriction), restriction, until: accepted.expireTime, registryPassword: accepted.id };
  }
  if ("username" in credential) {
    const signed = isJwt(credential.password);
    const accepted = signed ? await acceptSignedPassword(ctx, credential.username, credential.password) : await acceptPullToken(db, credential.username, credential.password, ctx.now());
    if (accepted === undefined) fail(401, "UNAUTHORIZED", "the pull token is unknown, revoked or expired", null, invalid);
    note.actor = { subject: accepted.identity, pullToken: true };
    return { caller: await identityCaller(ctx.grants, accepted.identity, invalid), pullToken: { expireTime: accepted.expireTime, ours: !signed } };
  }
  let claims;
  try {
    claims = await tokens.verify(credential.token, config.registryUrl);
  } catch (error) {
    fail(401, "UNAUTHORIZED", `${(error as Error).message}; the token must be a platform token whose audience is ${config.registryUrl}`, null, invalid);
  }
  if (claims.access !== undefined || claims.sub === ANONYMOUS_SUBJECT) {
    fail(401, "UNAUTHORIZED", "a registry token cannot be exchanged for another; use a platform token", null, invalid);
  }
  note.actor = { subject: claims.sub };
  const restriction = restrictionOf(claims);
  return { caller: await identityCaller(ctx.grants, claims.sub, invalid, restriction), restriction };
}

/**
 * Who asks: `caller`; for a pull token, until when its registry tokens may live and whether it is
 * one of ours (its registry tokens then say so, and each use checks it still lives); for a platform
 * token or a registry password, the restriction it carries; for a registry password with an expiry, `until` it.
 */
interface CallerOf {
  caller: Caller;
  pullToken?: { expireTime: number; ours: boolean };
  restriction?: TokenRestriction;
  until?: number;
  /** The registry password's id: its registry tokens say so, and each use checks it still lives. */
  registryPassword?: string;
}

/** Three dot-separated base64url parts: a JWT, not one of our `pap_` passwords. */
function isJwt(password: string): boolean {
  return /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/.test(password) && password.length <= MAX_SIGNED_PASSWORD;
}

/**
 * The hosted service's pull tokens: `username` is a static-keys identity's uid, the password a JWT
 * its key signed (issuer, subject and expiry checked as the token exchange checks them). Its
 * registry tokens end when the JWT does. Undefined when it does not verify.
 */
async function acceptSignedPassword(ctx: RegistryContext, username: string, password: string): Promise<{ identity: string; expireTime: number } | undefined> {
  if (!isUidp(username)) return undefined;
  let identity;
  try {
    identity = await getIdentity(ctx.db, username);
  } catch (error) {
    if (error instanceof NotFoundError) return undefined;
    throw error;
  }
  if (identity.static_keys === "") return undefined;
  try {
    const claims = await verifyForIdentity(password, identity, undefined, ctx.now());
    return { identity: identity.uid, expireTime: (claims.exp ?? 0) * 1000 };
  } catch (error) {
    if (error instanceof ExchangeRefused) return undefined;
    throw error;
  }
}

/** Joins entries naming the same repository. */
function merged(entries: AccessEntry[]): AccessEntry[] {
  const byName = new Map<string, AccessEntry>();
  for (const entry of entries) {
    const known = byName.get(entry.name);
    if (known === undefined) {
      byName.set(entry.name, { ...entry, actions: [...entry.actions] });
      continue;
    }
    known.actions = [PULL, PUSH, DELETE].filter((a): a is Action => known.actions.includes(a as Action) || entry.actions.includes(a as Action));
    if (known.tags === undefined || entry.tags === undefined) delete known.tags;
  }
  return [...byName.values()];
}

/**
 * `GET /token?scope=repository:<organization>/<image>:<actions>[&scope=...]`: a registry
 * token for what the caller may do of each scope (docs/decisions.md, "Registry host"), and
 * with `scope=registry:catalog:*` for listing the catalog.
 * With one scope, a caller who may do none of it gets the error; with several, a scope
 * it may do nothing of is left out of the token (the registry then refuses that use).
 * A pull token's request is a change the audit log records (`registry.pull_token.use`, its scopes).
 */
export async function handleToken(ctx: RegistryContext, req: NodeRequest, res: NodeResponse, query: URLSearchParams): Promise<void> {
  const { config, tokens } = ctx;
  const texts = query.getAll("scope").flatMap((s) => s.split(" ")).filter((s) => s !== "");
  if (texts.length > MAX_SCOPES) fail(400, "UNSUPPORTED", `at most ${MAX_SCOPES} scopes per token request`, { scopes: texts.length });
  // The catalog scope is granted to every caller: `/v2/_catalog` lists what the token's subject may pull.
  const catalog = texts.some(isCatalogScope);
  const scopes = texts.filter((t) => !isCatalogScope(t)).map(parseScope);
  const { caller, pullToken, restriction, until, registryPassword } = await callerOf(ctx, req, scopes.length === 1 && !catalog ? repositoryScope(scopes[0].name.full, scopes[0].actions) : undefined);
  if (pullToken !== undefined) ctx.note.change = { action: "registry.pull_token.use", resource: texts.join(" ") };

  const entries: AccessEntry[] = [];
  let firstFailure: RegistryFailure | undefined;
  for (const scope of scopes) {
    try {
      entries.push(await grant(ctx, caller, ctx.repository(scope.name), scope.actions));
    } catch (error) {
      if (!(error instanceof RegistryFailure) || (scopes.length === 1 && !catalog)) throw error;
      firstFailure ??= error;
    }
  }
  if (entries.length === 0 && !catalog && firstFailure !== undefined) throw firstFailure;

  // A pull token's or registry password's registry tokens end with it; a pull token's of ours also say they came from one (the endpoints then check it still lives).
  const end = pullToken?.expireTime ?? until;
  const ttlSeconds = end === undefined ? REGISTRY_TOKEN_TTL_SECONDS : Math.max(1, Math.min(REGISTRY_TOKEN_TTL_SECONDS, Math.floor((end - ctx.now()) / 1000)));
  const { token, expiry } = await tokens.issue({
    subject: caller.subject,
    audience: config.registryUrl,
    ttlSeconds,
    // A restricted platform token's registry token keeps the restriction (the catalog lists within it).
    claims: {
      access: [...merged(entries), ...(catalog ? [CATALOG_ENTRY] : [])],
      ...(pullToken?.ours ? { [PULL_TOKEN_CLAIM]: true } : {}),
      ...(registryPassword === undefined ? {} : { [REGISTRY_PASSWORD_CLAIM]: registryPassword }),
      ...(restriction === undefined ? {} : restrictionClaims(restriction)),
    },
  });
  const issuedAt = new Date(expiry.getTime() - ttlSeconds * 1000);
  writeJson(res, 200, JSON.stringify({ token, access_token: token, expires_in: ttlSeconds, issued_at: issuedAt.toISOString() }), REGISTRY_VERSION_HEADERS, NO_STORE, { pragma: "no-cache" });
}
