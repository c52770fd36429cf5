import { MethodOptions_IdempotencyLevel } from "@bufbuild/protobuf/wkt";
import type { Interceptor } from "@connectrpc/connect";
import { bearerToken } from "../transport/http/credentials.js";
import { unauthenticated } from "../aip/errors.js";
import type { GrantsCache } from "../domains/iam/index.js";
import { grantsFrom, principalKey, type Principal } from "../access/principal.js";
import { restrictedGrants, restrictionOf } from "../access/token-restriction.js";
import { personOf } from "../access/person-token.js";
import type { TokenService } from "../access/tokens.js";

/**
 * Verifies `Authorization: Bearer <token>` when present and puts the caller in
 * the context (`principalKey`). A malformed or invalid credential, or the token
 * of an identity that no longer exists, is UNAUTHENTICATED on every RPC; a
 * missing one is left for the authorization interceptor to judge. A person's token (the
 * server's login) whose identity does not exist yet is admitted as `unregistered` when its
 * subject is the identity that person's registration will create (person-token.ts). The caller's
 * existence and grants come from `grants` (see its contract for how fresh they are);
 * after every method that may have side effects (not `NO_SIDE_EFFECTS`), succeeded
 * or not, `grants.changed()` makes the next call see what it wrote.
 */
export function authenticationInterceptor(tokens: TokenService, grants: GrantsCache, audience: string): Interceptor {
  return (next) => async (req) => {
    const header = req.header.get("authorization");
    if (header !== null) {
      const token = bearerToken(header);
      if (token === undefined) throw unauthenticated("the Authorization header must be `Bearer <token>`");
      req.contextValues.set(principalKey, await principalOf(await tokens.verify(token, audience), grants));
    }
    if (req.method.idempotency === MethodOptions_IdempotencyLevel.NO_SIDE_EFFECTS) return next(req);
    try {
      return await next(req);
    } finally {
      grants.changed();
    }
  };
}

type Claims = Awaited<ReturnType<TokenService["verify"]>>;

/** What a token says beside its subject, read once per verified token (the token service keeps the claims of the tokens it verified). */
const described = new WeakMap<Claims, { token: NonNullable<Principal["token"]>; person: ReturnType<typeof personOf> }>();

function describe(claims: Claims) {
  let found = described.get(claims);
  if (!found) {
    const token = {
      issuer: String(claims.iss),
      audience: typeof claims.aud === "string" ? [claims.aud] : (claims.aud ?? []),
      expiry: (claims.exp ?? 0) * 1000,
      issuedAt: (claims.iat ?? 0) * 1000,
    };
    found = { token, person: personOf(claims) };
    described.set(claims, found);
  }
  return found;
}

async function principalOf(claims: Claims, grants: GrantsCache): Promise<Principal> {
  const { token, person } = describe(claims);
  const held = await grants.grantsOf(claims.sub);
  if (held !== undefined) return { identityUid: claims.sub, grants: restrictedGrants(held, restrictionOf(claims)), token, person: person?.claim };
  if (person?.unregisteredUid === claims.sub) return { identityUid: claims.sub, grants: grantsFrom([]), token, person: person.claim, unregistered: true };
  throw unauthenticated("the token's identity no longer exists");
}
