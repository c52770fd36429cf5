import type { Interceptor } from "@connectrpc/connect";
import { deadlineExceeded } from "../api/errors.js";

/**
 * Caps every unary call at `maxMs` (a client may ask for less with its own timeout).
 * The handler sees the capped signal, so a transaction still open when it fires
 * rolls back (see `inTransaction`), and the caller gets DEADLINE_EXCEEDED.
 */
export function deadlineInterceptor(maxMs: number): Interceptor {
  return (next) => async (req) => {
    if (req.stream) return next(req);
    const signal = AbortSignal.any([req.signal, AbortSignal.timeout(maxMs)]);
    return new Promise((resolve, reject) => {
      const onAbort = () => reject(deadlineExceeded(`the call took longer than its deadline`));
      signal.addEventListener("abort", onAbort, { once: true });
      next({ ...req, signal })
        .then(resolve, reject)
        .finally(() => signal.removeEventListener("abort", onAbort));
    });
  };
}
