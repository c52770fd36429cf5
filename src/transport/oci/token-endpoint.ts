import type { NodeRequest, NodeResponse } from "../http/node-types.js";
import { bearerToken } from "../http/credentials.js";
import { writeJson } from "../http/status-json.js";
import type { RegistryContext } from "./context.js";
import { ANONYMOUS_SUBJECT, CATALOG_ENTRY, grant, identityCaller, type AccessEntry, type Caller } from "./grant.js";
import { bearerChallenge, fail, REGISTRY_VERSION_HEADERS, RegistryFailure } from "./registry-errors.js";
import { DELETE, isCatalogScope, parseScope, PULL, PUSH, repositoryScope, type Action } from "./scope.js";

/** Registry tokens live 5 minutes: long enough for a pull, short enough that a revoked binding stops working soon. */
export const REGISTRY_TOKEN_TTL_SECONDS = 300;
/** Most scopes one token request may ask for. */
export const MAX_SCOPES = 8;

/** The platform token a request to `/token` carries, or undefined for an anonymous call. Throws 401 for a malformed header. */
function credentialOf(req: NodeRequest, registryUrl: string): string | undefined {
  const header = req.headers.authorization;
  if (header === undefined || header === "") return undefined;
  const value = String(header).trim();
  const bearer = bearerToken(value);
  if (bearer !== undefined) return bearer;
  const basic = /^Basic\s+([A-Za-z0-9+/=_-]+)$/i.exec(value);
  if (basic) {
    const decoded = Buffer.from(basic[1], "base64").toString("utf8");
    const colon = decoded.indexOf(":");
    if (colon >= 0 && decoded.slice(0, colon) === "_token" && decoded.length > colon + 1) return decoded.slice(colon + 1);
  }
  fail(401, "UNAUTHORIZED", "credentials must be `Bearer <platform token>` or Basic with user _token and the platform token as password", null, {
    "www-authenticate": bearerChallenge(registryUrl, { error: "invalid_token" }),
  });
}

async function callerOf(ctx: RegistryContext, req: NodeRequest, challengeScope: string | undefined): Promise<Caller> {
  const { config, tokens, db } = ctx;
  const credential = credentialOf(req, config.registryUrl);
  if (credential === undefined) return { subject: ANONYMOUS_SUBJECT };
  const invalid = { "www-authenticate": bearerChallenge(config.registryUrl, { scope: challengeScope, error: "invalid_token" }) };
  let claims;
  try {
    claims = await tokens.verify(credential, config.registryUrl);
  } catch (error) {
    fail(401, "UNAUTHORIZED", `${(error as Error).message}; the token must be a platform token whose audience is ${config.registryUrl}`, null, invalid);
  }
  if (claims.access !== undefined || claims.sub === ANONYMOUS_SUBJECT) {
    fail(401, "UNAUTHORIZED", "a registry token cannot be exchanged for another; use a platform token", null, invalid);
  }
  return identityCaller(db, claims.sub, invalid);
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
 */
export async function handleToken(ctx: RegistryContext, req: NodeRequest, res: NodeResponse, query: URLSearchParams): Promise<void> {
  const { config, tokens } = ctx;
  const texts = query.getAll("scope").flatMap((s) => s.split(" ")).filter((s) => s !== "");
  if (texts.length > MAX_SCOPES) fail(400, "UNSUPPORTED", `at most ${MAX_SCOPES} scopes per token request`, { scopes: texts.length });
  // The catalog scope is granted to every caller: `/v2/_catalog` lists what the token's subject may pull.
  const catalog = texts.some(isCatalogScope);
  const scopes = texts.filter((t) => !isCatalogScope(t)).map(parseScope);
  const caller = await callerOf(ctx, req, scopes.length === 1 && !catalog ? repositoryScope(scopes[0].name.full, scopes[0].actions) : undefined);

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

  const { token, expiry } = await tokens.issue({
    subject: caller.subject,
    audience: config.registryUrl,
    ttlSeconds: REGISTRY_TOKEN_TTL_SECONDS,
    claims: { access: [...merged(entries), ...(catalog ? [CATALOG_ENTRY] : [])] },
  });
  const issuedAt = new Date(expiry.getTime() - REGISTRY_TOKEN_TTL_SECONDS * 1000);
  writeJson(res, 200, JSON.stringify({ token, access_token: token, expires_in: REGISTRY_TOKEN_TTL_SECONDS, issued_at: issuedAt.toISOString() }), {
    ...REGISTRY_VERSION_HEADERS,
    "cache-control": "no-store",
    pragma: "no-cache",
  });
}
