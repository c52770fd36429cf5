import type * as http from "node:http";
import type * as http2 from "node:http2";

/** A Node server request: HTTP/1.1 or the HTTP/2 compat API. */
export type NodeRequest = http.IncomingMessage | http2.Http2ServerRequest;

/**
 * A Node server response: HTTP/1.1 or the HTTP/2 compat API. `write` is left out so that
 * connect-node's NodeServerResponse (what `connectNodeAdapter`'s `fallback` receives) fits too.
 */
export type NodeResponse = Omit<http.ServerResponse, "write"> | Omit<http2.Http2ServerResponse, "write">;

/** Response headers as Node's writeHead takes them. */
export type ResponseHeaders = Record<string, string | string[]>;

/** A request handler; a promise it returns rejects when answering failed (the listener's catch answers it). */
export type NodeHandler<Req = NodeRequest, Res = NodeResponse> = (req: Req, res: Res) => void | Promise<void>;
