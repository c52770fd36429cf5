import type { NodeRequest, NodeResponse } from "../http/node-types.js";
import { bearerToken } from "../http/credentials.js";
import { writeJson } from "../http/status-json.js";
import { acceptPullToken } from "../../domains/iam/index.js";
import type { RegistryContext } from "./context.js";
import { ANONYMOUS_SUBJECT, CATALOG_ENTRY, grant, identityCaller, PULL_TOKEN_CLAIM, type AccessEntry, type Caller } from "./grant.js";
import { bearerChallenge, fail, NO_STORE, REGISTRY_VERSION_HEADERS, RegistryFailure } from "./registry-errors.js";
import { DELETE, isCatalogScope, parseScope, PULL, PUSH, repositoryScope, type Action } from "./scope.js";

/** Registry tokens live 5 minutes: long enough for a pull, short enough that a revoked binding stops working soon. */
export const REGISTRY_TOKEN_TTL_SECONDS = 300;
/** Most scopes one token request may ask for. */
export const MAX_SCOPES = 8;

/** What a request to `/token` authenticates with: a platform token (as a Bearer token or Basic's password), or a pull token's username and password. */
type Credential = { token: string; via: "bearer" | "basic" } | { username: string; password: string };

const CREDENTIALS_EXPECTED =
  "credentials must be `Bearer <platform token>`, Basic with user _token and a platform token as password, or Basic with a pull token's username and password";

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
 * Who asks, and for a pull token until when its registry tokens may live. Notes the kind of
 * credential and, once verified, its subject as the request's actor (`ctx.note`).
 */
async function callerOf(ctx: RegistryContext, req: NodeRequest, challengeScope: string | undefined): Promise<{ caller: Caller; pullTokenExpiry?: number }> {
  const { config, tokens, db, note } = ctx;
  const credential = credentialOf(req, config.registryUrl);
  note.credential = credential === undefined ? "none" : "username" in credential ? "pull_token" : credential.via;
  if (credential === undefined) {
    note.actor = { subject: ANONYMOUS_SUBJECT };
    return { caller: { subject: ANONYMOUS_SUBJECT } };
  }
  const invalid = { "www-authenticate": bearerChallenge(config.registryUrl, { scope: challengeScope, error: "invalid_token" }) };
  if ("username" in credential) {
    const accepted = await acceptPullToken(db, credential.username, credential.password, ctx.now());
    if (accepted === undefined) fail(401, "UNAUTHORIZED", "the pull token is unknown, revoked or expired", null, invalid);
    note.actor = { subject: accepted.identity, pullToken: true };
    return { caller: await identityCaller(db, accepted.identity, invalid), pullTokenExpiry: accepted.expireTime };
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
  return { caller: await identityCaller(db, claims.sub, invalid) };
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
  const { caller, pullTokenExpiry } = await callerOf(ctx, req, scopes.length === 1 && !catalog ? repositoryScope(scopes[0].name.full, scopes[0].actions) : undefined);
  if (pullTokenExpiry !== undefined) ctx.note.change = { action: "registry.pull_token.use", resource: texts.join(" ") };

  const entries: AccessEntry[] = [];
  let firstFailure: RegistryFailure | undefined;
  for (const scope of scopes) {
    try {
      entries.push(await grant(ctx, caller, scope));
    } catch (error) {
      if (!(error instanceof RegistryFailure) || (scopes.length === 1 && !catalog)) throw error;
      firstFailure ??= error;
    }
  }
  if (entries.length === 0 && !catalog && firstFailure !== undefined) throw firstFailure;

  // A pull token's registry tokens end with it, and say they came from one (the endpoints then check it still lives).
  const ttlSeconds = pullTokenExpiry === undefined ? REGISTRY_TOKEN_TTL_SECONDS : Math.max(1, Math.min(REGISTRY_TOKEN_TTL_SECONDS, Math.floor((pullTokenExpiry - ctx.now()) / 1000)));
  const { token, expiry } = await tokens.issue({
    subject: caller.subject,
    audience: config.registryUrl,
    ttlSeconds,
    claims: { access: [...merged(entries), ...(catalog ? [CATALOG_ENTRY] : [])], ...(pullTokenExpiry === undefined ? {} : { [PULL_TOKEN_CLAIM]: true }) },
  });
  const issuedAt = new Date(expiry.getTime() - ttlSeconds * 1000);
  writeJson(res, 200, JSON.stringify({ token, access_token: token, expires_in: ttlSeconds, issued_at: issuedAt.toISOString() }), REGISTRY_VERSION_HEADERS, NO_STORE, { pragma: "no-cache" });
}
