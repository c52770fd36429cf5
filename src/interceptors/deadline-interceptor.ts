import type { Interceptor } from "@connectrpc/connect";
import { deadlineExceeded } from "../api/errors.js";

/**
 * Caps every unary call at `maxMs` (a client may ask for less with its own
 * timeout). The handler sees the capped signal, so a transaction still open
 * when it fires rolls back (see `inTransaction`), and the caller gets
 * DEADLINE_EXCEEDED. Streams are not capped.
 */
export function deadlineInterceptor(maxMs: number): Interceptor {
  return (next) => (req) => {
    if (req.stream) return next(req);
    // One controller following the call's signal by a listener, and a plain timer: AbortSignal.any costs about 20 us a call.
    const capped = new AbortController();
    const outer = req.signal;
    const follow = () => capped.abort(outer.reason);
    if (outer.aborted) follow();
    else outer.addEventListener("abort", follow);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        capped.abort();
        reject(deadlineExceeded("the call took longer than its deadline"));
      }, maxMs);
      next({ ...req, signal: capped.signal })
        .then(resolve, reject)
        .finally(() => {
          clearTimeout(timer);
          outer.removeEventListener("abort", follow);
        });
    });
  };
}
