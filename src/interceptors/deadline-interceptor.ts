import { Code, ConnectError, type Interceptor } from "@connectrpc/connect";
import { deadlineExceeded } from "../aip/errors.js";

/** Why the call's own signal ended it: its reason when it is a ConnectError (deadline, client gone), else CANCELED. */
function endedBy(reason: unknown): ConnectError {
  return reason instanceof ConnectError ? reason : new ConnectError("the call was canceled", Code.Canceled, undefined, undefined, reason);
}

/**
 * Caps every unary call at `maxMs` (a client may ask for less with its own timeout) and ends it
 * as soon as its own signal does (the caller's deadline passed, or the caller left): a call whose
 * deadline is spent when it arrives is not run, and one that outlives it answers DEADLINE_EXCEEDED
 * whether or not its handler watches the signal. The handler sees the capped signal, so a
 * transaction still open when it fires rolls back (see `inTransaction`). Streams are not capped.
 */
export function deadlineInterceptor(maxMs: number): Interceptor {
  return (next) => (req) => {
    if (req.stream) return next(req);
    const outer = req.signal;
    if (outer.aborted) return Promise.reject(endedBy(outer.reason));
    // One controller following the call's signal by a listener, and a plain timer: AbortSignal.any costs about 20 us a call.
    const capped = new AbortController();
    return new Promise((resolve, reject) => {
      const follow = () => {
        capped.abort(outer.reason);
        reject(endedBy(outer.reason));
      };
      outer.addEventListener("abort", follow);
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
