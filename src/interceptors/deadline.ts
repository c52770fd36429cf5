import { Code, ConnectError, type UnaryRequest, type UnaryResponse } from "@connectrpc/connect";
import { ApiError, deadlineExceeded } from "../aip/errors.js";
import { callLifeKey } from "./request-context.js";

/** Why the call's own signal ended it: its reason when it is a ConnectError (deadline, client gone), else CANCELED. */
function endedBy(reason: unknown): ConnectError {
  return reason instanceof ConnectError ? reason : new ConnectError("the call was canceled", Code.Canceled, undefined, undefined, reason);
}

const overLimit = () => deadlineExceeded("the call took longer than its deadline");

/**
 * Runs a unary call capped at `maxMs` (a client may ask for less with its own timeout) and ends
 * it as soon as the call itself ends (the caller's deadline passed, or the caller left): a call
 * whose deadline is spent when it arrives is not run, and one that outlives it answers
 * DEADLINE_EXCEEDED whether or not its handler watches the signal. The handler's signal aborts at
 * the cap too, so a transaction still open then rolls back (see `inTransaction`).
 *
 * On a direct path (`callLifeKey` set) the cap is one more deadline of the call's life (one timer,
 * no signal made); under the adapter, a controller follows the request's signal.
 */
export function withDeadline(next: (req: UnaryRequest) => Promise<UnaryResponse>, req: UnaryRequest, maxMs: number): Promise<UnaryResponse> {
  const life = req.contextValues.get(callLifeKey);
  if (life !== undefined) {
    life.deadlineIn(maxMs, overLimit);
    return life.race(() => next(req), (reason) => (reason instanceof ApiError ? reason : endedBy(reason)));
  }
  const outer = req.signal;
  if (outer.aborted) return Promise.reject(endedBy(outer.reason));
  // One controller following the call's signal by a listener, and a plain timer (docs/performance.md).
  const capped = new AbortController();
  return new Promise((resolve, reject) => {
    const follow = () => {
      capped.abort(outer.reason);
      reject(endedBy(outer.reason));
    };
    outer.addEventListener("abort", follow);
    const timer = setTimeout(() => {
      capped.abort();
      reject(overLimit());
    }, maxMs);
    next({ ...req, signal: capped.signal })
      .then(resolve, reject)
      .finally(() => {
        clearTimeout(timer);
        outer.removeEventListener("abort", follow);
      });
  });
}
