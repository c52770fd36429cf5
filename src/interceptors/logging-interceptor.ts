import { Code, ConnectError, type Interceptor } from "@connectrpc/connect";
import { codeName } from "../api/errors.js";
import { principalKey } from "../auth/principal.js";
import type { Logger } from "../logger.js";
import { protocolKey } from "./request-context.js";

/** One log line per call: procedure, protocol, code, duration, caller. Outermost interceptor. */
export function loggingInterceptor(logger: Logger): Interceptor {
  return (next) => async (req) => {
    const start = performance.now();
    let code = "ok";
    try {
      return await next(req);
    } catch (error) {
      code = codeName(error instanceof ConnectError ? error.code : Code.Internal).toLowerCase();
      throw error;
    } finally {
      logger.info("call", {
        procedure: `/${req.service.typeName}/${req.method.name}`,
        protocol: req.contextValues.get(protocolKey),
        code,
        durationMs: Math.round((performance.now() - start) * 100) / 100,
        caller: req.contextValues.get(principalKey)?.identityUid ?? null,
      });
    }
  };
}
