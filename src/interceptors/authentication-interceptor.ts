import type { Interceptor } from "@connectrpc/connect";
import { unauthenticated } from "../api/errors.js";
import { grantsFrom, principalKey, type Grants } from "../auth/principal.js";
import type { TokenService } from "../auth/tokens.js";
import { grantsOf } from "../store/repositories/role-bindings.js";
import type { Db } from "../store/tables.js";

/**
 * Verifies `Authorization: Bearer <token>` when present and puts the caller in
 * the context (`principalKey`). A malformed or invalid credential is
 * UNAUTHENTICATED on every RPC; a missing one is left for the authorization
 * interceptor to judge.
 */
export function authenticationInterceptor(tokens: TokenService, db: Db, audience: string): Interceptor {
  return (next) => async (req) => {
    const header = req.header.get("authorization");
    if (header !== null) {
      const match = /^Bearer\s+(\S+)$/i.exec(header.trim());
      if (!match) throw unauthenticated("the Authorization header must be `Bearer <token>`");
      const claims = await tokens.verify(match[1], audience);
      let grants: Promise<Grants> | undefined;
      req.contextValues.set(principalKey, {
        identityUid: claims.sub,
        grants: () => (grants ??= grantsOf(db, claims.sub).then(grantsFrom)),
      });
    }
    return next(req);
  };
}
