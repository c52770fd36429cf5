import { grantsFrom } from "../auth/principal.js";
import type { TokenService } from "../auth/tokens.js";
import type { ServerConfig } from "../config.js";
import type { NodeRequest, NodeResponse } from "../rest/node-types.js";
import { writeJson } from "../rest/status-json.js";
import { findOrganizationByName } from "../store/repositories/groups.js";
import { findRepoByPath } from "../store/repositories/repos.js";
import { grantsOf } from "../store/repositories/role-bindings.js";
import type { Db } from "../store/tables.js";
import { bearerChallenge, fail, REGISTRY_VERSION_HEADERS } from "./registry-errors.js";
import { parseScope, pullScope, PULL, type RepositoryName } from "./scope.js";

/** Registry tokens live 5 minutes: long enough for a pull, short enough that a revoked binding stops working soon. */
export const REGISTRY_TOKEN_TTL_SECONDS = 300;
/** The only tags an anonymous (free tier) token grants (spec 5 rule 4). */
export const FREE_TIER_TAGS = ["latest", "latest-dev"] as const;
/** The `sub` of tokens issued to anonymous callers (never an identity uid: those are UIDPs). */
export const ANONYMOUS_SUBJECT = "anonymous";
export const CAP_REGISTRY_PULL = "CAP_REGISTRY_PULL";
export const DEFAULT_PUBLIC_ORGANIZATION = "public";

/** One entry of a registry token's `access` claim. */
export interface AccessEntry {
  type: "repository";
  /** `<organization>/<image>`. */
  name: string;
  actions: string[];
  /** When present, the only tags the token may read. */
  tags?: string[];
}

export interface RegistryContext {
  config: ServerConfig;
  db: Db;
  tokens: TokenService;
}

/** The platform token a request to `/token` carries, or undefined for an anonymous call. Throws 401 for a malformed header. */
function credentialOf(req: NodeRequest, registryUrl: string): string | undefined {
  const header = req.headers.authorization;
  if (header === undefined || header === "") return undefined;
  const value = String(header).trim();
  const bearer = /^Bearer\s+(\S+)$/i.exec(value);
  if (bearer) return bearer[1];
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

/**
 * `GET /token?scope=repository:<organization>/<image>:pull`: a registry token for
 * reading that image's tag history (docs/decisions.md, "Registry host").
 */
export async function handleToken(ctx: RegistryContext, req: NodeRequest, res: NodeResponse, query: URLSearchParams): Promise<void> {
  const { config, db, tokens } = ctx;
  const scopes = query.getAll("scope");
  if (scopes.length !== 1) fail(400, "UNSUPPORTED", "exactly one scope=repository:<organization>/<image>:pull is required", { scopes: scopes.length });
  const { name } = parseScope(scopes[0]);
  const publicOrganization = config.publicOrganization ?? DEFAULT_PUBLIC_ORGANIZATION;
  const challenge = { "www-authenticate": bearerChallenge(config.registryUrl, { scope: pullScope(name.full) }) };

  const credential = credentialOf(req, config.registryUrl);
  const repo = await findRepoByPath(db, name.organization, name.image);
  const isPublic = name.organization === publicOrganization;

  let subject = ANONYMOUS_SUBJECT;
  let fullAccess = false;
  if (credential === undefined) {
    if (!isPublic) fail(401, "UNAUTHORIZED", "authentication required: this image needs a platform token", { name: name.full }, challenge);
  } else {
    const invalid = { "www-authenticate": bearerChallenge(config.registryUrl, { scope: pullScope(name.full), error: "invalid_token" }) };
    let claims;
    try {
      claims = await tokens.verify(credential, config.registryUrl);
    } catch (error) {
      fail(401, "UNAUTHORIZED", `${(error as Error).message}; the token must be a platform token whose audience is ${config.registryUrl}`, null, invalid);
    }
    if (claims.access !== undefined || claims.sub === ANONYMOUS_SUBJECT) {
      fail(401, "UNAUTHORIZED", "a registry token cannot be exchanged for another; use a platform token", null, invalid);
    }
    subject = claims.sub;
    const grants = grantsFrom(await grantsOf(db, claims.sub));
    if (repo !== undefined) {
      fullAccess = grants.has(repo.group_uid, [CAP_REGISTRY_PULL]);
      if (!fullAccess && !isPublic) fail(403, "DENIED", `the caller may not pull ${name.full}`, { name: name.full });
    } else if (!isPublic) {
      // NAME_UNKNOWN only for a caller who could pull anything in the organization; DENIED otherwise, whether or not it exists.
      const organization = await findOrganizationByName(db, name.organization);
      if (organization !== undefined && grants.has(organization.uid, [CAP_REGISTRY_PULL])) notFound(name);
      fail(403, "DENIED", `the caller may not pull ${name.full}`, { name: name.full });
    }
  }
  if (repo === undefined) notFound(name); // only reached for the public organization, whose contents are public

  const access: AccessEntry = { type: "repository", name: name.full, actions: [PULL] };
  if (!fullAccess) access.tags = [...FREE_TIER_TAGS];
  const { token, expiry } = await tokens.issue({
    subject,
    audience: config.registryUrl,
    ttlSeconds: REGISTRY_TOKEN_TTL_SECONDS,
    claims: { access: [access] },
  });
  const issuedAt = new Date(expiry.getTime() - REGISTRY_TOKEN_TTL_SECONDS * 1000);
  writeJson(res, 200, JSON.stringify({ token, access_token: token, expires_in: REGISTRY_TOKEN_TTL_SECONDS, issued_at: issuedAt.toISOString() }), {
    ...REGISTRY_VERSION_HEADERS,
    "cache-control": "no-store",
    pragma: "no-cache",
  });
}

function notFound(name: RepositoryName): never {
  fail(404, "NAME_UNKNOWN", `repository ${name.full} is not known to the registry`, { name: name.full });
}
