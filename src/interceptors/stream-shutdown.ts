import { Code, ConnectError, type StreamRequest } from "@connectrpc/connect";

export interface StreamShutdown {
  /** The streaming request with a signal that also aborts at shutdown. */
  follow<R extends StreamRequest>(req: R): R;
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
    follow: (req) => ({ ...req, signal: AbortSignal.any([req.signal, controller.signal]) }),
    endStreams: () => controller.abort(new ConnectError("the server is shutting down", Code.Unavailable)),
  };
}
