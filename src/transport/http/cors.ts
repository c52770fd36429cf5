import { cors as connectCors } from "@connectrpc/connect";
import { sendStatus } from "./status-json.js";
import type { NodeHandler, NodeRequest, NodeResponse } from "./node-types.js";

/** Which browser origins may call the API host. */
export interface CorsPolicy {
  /** Exact origins (`https://app.example.com`), or `*` for any; empty: no cross-origin call is allowed (the default). */
  allowedOrigins: readonly string[];
}

/** Request headers a browser may send: Connect's and gRPC-Web's, the credential, and ours. */
export const CORS_ALLOWED_HEADERS = [...connectCors.allowedHeaders, "Authorization", "X-Request-Id", "Traceparent", "Tracestate"];
/** Response headers a script may read: gRPC-Web's status and details, the request id, the REST challenge. */
export const CORS_EXPOSED_HEADERS = [...connectCors.exposedHeaders, "X-Request-Id", "WWW-Authenticate"];
/** Connect's methods (POST, GET) and REST's. */
export const CORS_ALLOWED_METHODS = [...new Set([...connectCors.allowedMethods, "PUT", "PATCH", "DELETE"])];
/** How long a browser may cache a preflight answer, seconds. */
const MAX_AGE_SECONDS = 7200;

/**
 * CORS for every path of the API host (Connect, gRPC-Web, REST, /openapi.json). A request
 * without `Origin` passes untouched (one header read). From an allowed origin, a preflight
 * (`OPTIONS` with `Access-Control-Request-Method`) is answered 204 with the allowed methods
 * and headers, and any other request passes with `Access-Control-Allow-Origin` and the exposed
 * headers. From another origin, a preflight is answered 403 (a google.rpc.Status naming the
 * origin, for the browser console) and other requests pass without CORS headers, so the
 * browser withholds the answer. No credentials mode: tokens travel in `Authorization`, not cookies.
 */
export function withCors<Res extends NodeResponse>(handler: NodeHandler<NodeRequest, Res>, policy: CorsPolicy, errorDomain: string): NodeHandler<NodeRequest, Res> {
  if (policy.allowedOrigins.length === 0) return handler;
  const any = policy.allowedOrigins.includes("*");
  const origins = new Set(policy.allowedOrigins);
  return (req, res) => {
    const origin = req.headers.origin;
    if (origin === undefined) return handler(req, res);
    const allowed = any || origins.has(origin);
    const preflight = req.method === "OPTIONS" && req.headers["access-control-request-method"] !== undefined;
    if (preflight) {
      req.resume();
      if (!allowed) {
        sendStatus(res, 403, { code: 7, message: `Permission denied: origin ${origin.slice(0, 256)} may not call this server (serve --cors-origins)`, reason: "CORS_ORIGIN_NOT_ALLOWED" }, errorDomain, { vary: "Origin" });
        return;
      }
      res.writeHead(204, {
        "access-control-allow-origin": any ? "*" : origin,
        "access-control-allow-methods": CORS_ALLOWED_METHODS.join(", "),
        "access-control-allow-headers": CORS_ALLOWED_HEADERS.join(", "),
        "access-control-max-age": String(MAX_AGE_SECONDS),
        vary: "Origin",
        "content-length": "0",
      });
      res.end();
      return;
    }
    if (allowed) {
      res.setHeader("access-control-allow-origin", any ? "*" : origin);
      res.setHeader("access-control-expose-headers", CORS_EXPOSED_HEADERS.join(", "));
      res.setHeader("vary", "Origin");
    }
    return handler(req, res);
  };
}
