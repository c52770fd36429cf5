import { decodeJwt } from "jose";
import { bearerToken, sameUrl } from "../http/credentials.js";
import type { NodeRequest } from "../http/node-types.js";
import { bearerChallenge, fail, RegistryFailure } from "./registry-errors.js";
import type { Repository, RepositoryName } from "../../domains/registry/index.js";
import { CATALOG_SCOPE, PULL, PUSH, repositoryScope, type Action } from "./scope.js";
import type { RegistryContext } from "./context.js";
import { pullTokenLive } from "../../domains/iam/index.js";
import { restrictionOf } from "../../access/token-restriction.js";
import { ANONYMOUS_SUBJECT, grant, identityCaller, PULL_TOKEN_CLAIM, REGISTRY_PASSWORD_CLAIM, type AccessEntry, type Caller } from "./grant.js";
import { registryPasswordLive } from "../../domains/auth/index.js";

/** The scope a client is sent to ask for: pushing needs pull too (clients read what they push). */
function challengeScope(name: RepositoryName, action: Action): string {
  return repositoryScope(name.full, action === PUSH ? [PULL, PUSH] : [action]);
}

/**
 * Verifies the registry token of a request and notes its subject as the request's actor
 * (`ctx.note.actor`). Throws 401 with a challenge when there is none or it is invalid, and
 * 403 for a token of another audience (spec 7 rule 4).
 */
async function registryClaims(ctx: RegistryContext, req: NodeRequest, scope: string | undefined, name?: RepositoryName) {
  const { config, tokens } = ctx;
  const header = req.headers.authorization;
  const bearer = bearerToken(header);
  const detail = name === undefined ? null : { name: name.full };
  if (bearer === undefined) {
    fail(401, "UNAUTHORIZED", "authentication required: get a token from the realm of the WWW-Authenticate challenge", detail, {
      "www-authenticate": bearerChallenge(config.registryUrl, { scope }),
    });
  }
  let claims: Awaited<ReturnType<typeof tokens.verify>>;
  try {
    claims = await tokens.verify(bearer, config.registryUrl);
  } catch (error) {
    let audiences: string[] = [];
    try {
      const aud = decodeJwt(bearer).aud;
      audiences = aud === undefined ? [] : Array.isArray(aud) ? aud : [aud];
    } catch {
      // not a JWT at all
    }
    if (audiences.length > 0 && !audiences.some((a) => sameUrl(a, config.registryUrl))) {
      fail(403, "DENIED", `the token was not issued for this registry (audience ${config.registryUrl})`, detail);
    }
    fail(401, "UNAUTHORIZED", (error as Error).message, detail, {
      "www-authenticate": bearerChallenge(config.registryUrl, { scope, error: "invalid_token" }),
    });
  }
  ctx.note.actor = { subject: claims.sub ?? "", ...(claims[PULL_TOKEN_CLAIM] === true ? { pullToken: true } : {}) };
  return claims;
}

/** A registry token issued to a registry password works only while the password lives: revoking it revokes them at once. */
async function requireLiveRegistryPassword(ctx: RegistryContext, claims: Record<string, unknown>, scope: string | undefined): Promise<void> {
  const id = claims[REGISTRY_PASSWORD_CLAIM];
  if (typeof id !== "string") return;
  if (!(await registryPasswordLive(ctx.db, id, String(claims.sub ?? ""), ctx.now()))) {
    fail(401, "UNAUTHORIZED", "the registry password is revoked or expired", null, { "www-authenticate": bearerChallenge(ctx.config.registryUrl, { scope, error: "invalid_token" }) });
  }
}

/** A registry token issued to a pull token works only while the pull token lives: deleting its identity revokes it at once. */
async function requireLivePullToken(ctx: RegistryContext, identity: string, scope: string): Promise<void> {
  if (!(await pullTokenLive(ctx.db, identity, ctx.now()))) {
    fail(401, "UNAUTHORIZED", "the pull token is revoked or expired", null, { "www-authenticate": bearerChallenge(ctx.config.registryUrl, { scope, error: "invalid_token" }) });
  }
}

/** `GET /v2/`: any valid registry token (a client's check that it is authenticated); 401 with a challenge otherwise. */
export async function authorizePing(ctx: RegistryContext, req: NodeRequest): Promise<void> {
  await registryClaims(ctx, req, undefined);
}

/** What a request may do of a repository, and who asks (the token's subject: an identity uid, or `anonymous`). */
export type RepositoryAccess = AccessEntry & { subject: string };

/**
 * What the request may do of `repository`, for `action`, and who asks. Two kinds of bearer token are accepted:
 * a registry token from `/token`, whose `access` claim must grant `action` on the repository, and a
 * platform token whose audience is the registry (no `access` claim, `sub` an identity),
 * judged now by the identity's role bindings exactly as `/token` would judge it (`grant`).
 * Throws 401 (no or invalid token, with the challenge for the scope to ask for, and `alsoChallenge`
 * beside it: a mount's source) or 403 (a valid token that does not grant it: asking again would not help).
 */
export async function authorizeRepository(ctx: RegistryContext, req: NodeRequest, repository: Repository, action: Action, alsoChallenge?: string): Promise<RepositoryAccess> {
  const { name } = repository;
  const claims = await registryClaims(ctx, req, [challengeScope(name, action), alsoChallenge].filter((s) => s !== undefined).join(" "), name);
  const subject = claims.sub ?? "";
  if (claims.access === undefined && subject !== ANONYMOUS_SUBJECT) {
    const challenge = { "www-authenticate": bearerChallenge(ctx.config.registryUrl, { scope: challengeScope(name, action), error: "invalid_token" }) };
    return Object.assign({}, await grant(ctx, await identityCaller(ctx.grants, subject, challenge, restrictionOf(claims)), repository, [action]), { subject });
  }
  if (claims[PULL_TOKEN_CLAIM] === true) await requireLivePullToken(ctx, subject, challengeScope(name, action));
  await requireLiveRegistryPassword(ctx, claims, challengeScope(name, action));
  const access = Array.isArray(claims.access) ? (claims.access as AccessEntry[]) : [];
  const entry = access.find((a) => a?.type === "repository" && a.name === name.full && Array.isArray(a.actions) && a.actions.includes(action));
  if (entry === undefined) fail(403, "DENIED", `the token does not grant ${action} on ${name.full}`, { name: name.full });
  // Object.assign, not a literal with a spread and more fields (docs/performance.md).
  return Object.assign({}, entry, { subject });
}

/**
 * Who lists the catalog (`GET /v2/_catalog`): a registry token granting the catalog scope
 * (anonymous, or its identity with the role bindings it has now), or a platform token whose
 * audience is the registry. Throws 401 with a challenge for `registry:catalog:*` (no or an
 * invalid token, or an identity that no longer exists) and 403 for a registry token without
 * the catalog scope.
 */
export async function authorizeCatalog(ctx: RegistryContext, req: NodeRequest): Promise<Caller> {
  const claims = await registryClaims(ctx, req, CATALOG_SCOPE);
  if (claims[PULL_TOKEN_CLAIM] === true) await requireLivePullToken(ctx, claims.sub ?? "", CATALOG_SCOPE);
  await requireLiveRegistryPassword(ctx, claims, CATALOG_SCOPE);
  if (claims.access !== undefined) {
    const access = Array.isArray(claims.access) ? (claims.access as Array<{ type?: unknown; name?: unknown }>) : [];
    if (!access.some((a) => a?.type === "registry" && a.name === "catalog")) fail(403, "DENIED", `the token does not grant the catalog: ask /token for ${CATALOG_SCOPE}`, null);
  }
  if (claims.sub === ANONYMOUS_SUBJECT) return { subject: ANONYMOUS_SUBJECT };
  const challenge = { "www-authenticate": bearerChallenge(ctx.config.registryUrl, { scope: CATALOG_SCOPE, error: "invalid_token" }) };
  return identityCaller(ctx.grants, claims.sub, challenge, restrictionOf(claims));
}

/** The scope a mount asks of its source repository (`from`, as given: an invalid name is refused by the endpoint), named in a mount's challenges. */
export function mountSourceScope(source: string): string {
  return repositoryScope(source, [PULL]);
}

/**
 * Whether the request may pull `source`, to mount one of its blobs into `target` (which it may push).
 * A registry token that does not name `source`, held by a caller who may pull it, was not asked for it:
 * 401 with a challenge for both scopes (insufficient_scope, as distribution answers), so the client asks
 * `/token` for both and tries again. A caller who may not pull it (whatever the token names) gets false,
 * and the client uploads the blob instead (202).
 */
export async function mayMountFrom(ctx: RegistryContext, req: NodeRequest, target: Repository, source: Repository): Promise<boolean> {
  const both = `${challengeScope(target.name, PUSH)} ${mountSourceScope(source.name.full)}`;
  const claims = await registryClaims(ctx, req, both, target.name);
  const subject = claims.sub ?? "";
  if (Array.isArray(claims.access) && subject !== ANONYMOUS_SUBJECT && !(claims.access as AccessEntry[]).some((a) => a?.type === "repository" && a.name === source.name.full)) {
    const challenge = { "www-authenticate": bearerChallenge(ctx.config.registryUrl, { scope: both, error: "insufficient_scope" }) };
    const caller = await identityCaller(ctx.grants, subject, challenge, restrictionOf(claims));
    if (!(await mayPull(ctx, caller, source))) return false;
    fail(401, "UNAUTHORIZED", `the token was not asked for ${source.name.full}: ask /token for both scopes of the challenge`, { name: target.name.full }, challenge);
  }
  return authorizeRepository(ctx, req, source, PULL).then(
    () => true,
    (error: unknown) => {
      if (error instanceof RegistryFailure) return false;
      throw error;
    },
  );
}

/** Whether `caller` may pull `repository` now (what `/token` would grant it). */
function mayPull(ctx: RegistryContext, caller: Caller, repository: Repository): Promise<boolean> {
  return grant(ctx, caller, repository, [PULL]).then(
    (entry) => entry.actions.includes(PULL),
    (error: unknown) => {
      if (error instanceof RegistryFailure) return false;
      throw error;
    },
  );
}
