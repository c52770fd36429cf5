import { MethodOptions_IdempotencyLevel } from "@bufbuild/protobuf/wkt";
import type { Interceptor } from "@connectrpc/connect";
import { bearerToken } from "../transport/http/credentials.js";
import { unauthenticated } from "../aip/errors.js";
import type { GrantsCache } from "../auth/grants-cache.js";
import { principalKey } from "../auth/principal.js";
import type { TokenService } from "../auth/tokens.js";

/**
 * Verifies `Authorization: Bearer <token>` when present and puts the caller in
 * the context (`principalKey`). A malformed or invalid credential, or the token
 * of an identity that no longer exists, is UNAUTHENTICATED on every RPC; a
 * missing one is left for the authorization interceptor to judge. The caller's
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
      const claims = await tokens.verify(token, audience);
      const held = await grants.grantsOf(claims.sub);
      if (held === undefined) throw unauthenticated("the token's identity no longer exists");
      req.contextValues.set(principalKey, { identityUid: claims.sub, grants: held });
    }
    if (req.method.idempotency === MethodOptions_IdempotencyLevel.NO_SIDE_EFFECTS) return next(req);
    try {
      return await next(req);
    } finally {
      grants.changed();
    }
  };
}
