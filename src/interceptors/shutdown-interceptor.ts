import { Code, ConnectError, type Interceptor } from "@connectrpc/connect";

export interface StreamShutdown {
  interceptor: Interceptor;
  /** Ends every streaming call (health Watch, reflection) now and any started later. */
  endStreams(): void;
}

/**
 * Lets shutdown end long-lived streams, which would otherwise hold their HTTP/2
 * connections open, while unary calls in flight run to completion.
 */
export function createStreamShutdown(): StreamShutdown {
  const controller = new AbortController();
  return {
    interceptor: (next) => (req) => (req.stream ? next({ ...req, signal: AbortSignal.any([req.signal, controller.signal]) }) : next(req)),
    endStreams: () => controller.abort(new ConnectError("the server is shutting down", Code.Unavailable)),
  };
}
