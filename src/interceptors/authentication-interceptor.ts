import type { Interceptor } from "@connectrpc/connect";
import { bearerToken } from "../http/credentials.js";
import { unauthenticated } from "../api/errors.js";
import { grantsFrom, principalKey } from "../auth/principal.js";
import type { TokenService } from "../auth/tokens.js";
import { grantsOf } from "../domains/iam/store/role-bindings.js";
import type { Db } from "../store/tables.js";

/**
 * Verifies `Authorization: Bearer <token>` when present and puts the caller in
 * the context (`principalKey`). A malformed or invalid credential, or the token
 * of an identity that no longer exists, is UNAUTHENTICATED on every RPC; a
 * missing one is left for the authorization interceptor to judge. The caller's
 * existence and grants are one query per call.
 */
export function authenticationInterceptor(tokens: TokenService, db: Db, audience: string): Interceptor {
  return (next) => async (req) => {
    const header = req.header.get("authorization");
    if (header !== null) {
      const token = bearerToken(header);
      if (token === undefined) throw unauthenticated("the Authorization header must be `Bearer <token>`");
      const claims = await tokens.verify(token, audience);
      const pairs = await grantsOf(db, claims.sub);
      if (pairs === undefined) throw unauthenticated("the token's identity no longer exists");
      req.contextValues.set(principalKey, { identityUid: claims.sub, grants: grantsFrom(pairs) });
    }
    return next(req);
  };
}
