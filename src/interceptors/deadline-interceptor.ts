import type { Interceptor } from "@connectrpc/connect";
import { deadlineExceeded } from "../api/errors.js";

/**
 * Caps every unary call at `maxMs` (a client may ask for less with its own
 * timeout). The handler sees the capped signal, so a transaction still open
 * when it fires rolls back (see `inTransaction`), and the caller gets
 * DEADLINE_EXCEEDED. Streams are not capped.
 */
export function deadlineInterceptor(maxMs: number): Interceptor {
  return (next) => async (req) => {
    if (req.stream) return next(req);
    // A plain timer, not AbortSignal.timeout: combined with AbortSignal.any, Node 20 may collect that signal before it fires.
    const timeout = new AbortController();
    const signal = AbortSignal.any([req.signal, timeout.signal]);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        timeout.abort();
        reject(deadlineExceeded("the call took longer than its deadline"));
      }, maxMs);
      next({ ...req, signal })
        .then(resolve, reject)
        .finally(() => clearTimeout(timer));
    });
  };
}
