import type { NodeRequest, ResponseHeaders } from "../http/node-types.js";
import { injectTraceHeaders } from "../../telemetry/tracing.js";

/**
 * The header policy of the direct paths: which request headers reach a handler's context
 * (`ctx.requestHeader`) and which of an answer's headers and trailers go out.
 *
 * Request:
 * - gRPC and Connect: every header the caller sent but HTTP/2 pseudo-headers, as connect-node
 *   hands them over (gRPC's content type as connect-es names it, `application/grpc+proto`).
 * - REST: the caller's own headers (authorization, x-request-id, ...), without those of the HTTP
 *   exchange (`REST_EXCHANGE_REQUEST`) and of the RPC protocols (`connect-*`, `grpc-*`); then the
 *   Connect unary headers (`application/proto`, version 1, the caller's `connect-timeout-ms`) and
 *   the active trace context, so the call's span is the child of the request's.
 * Answer (headers and trailers):
 * - gRPC: all but those the gRPC exchange writes itself (`GRPC_EXCHANGE`);
 * - Connect: all, as connect-node writes them;
 * - REST: all but those of the REST exchange (`REST_EXCHANGE_RESPONSE`) and of the RPC protocols,
 *   trailers (`trailer-` names) unprefixed.
 * A name given more than once is a list (only `set-cookie`: `Headers` joins any other's values).
 */

/** The protocol of a direct path, as `protocolKey` names it. */
export type Wire = "grpc" | "connect" | "rest";

/** The content type of every gRPC answer, as connect-es writes it for binary gRPC. */
export const GRPC_CONTENT_TYPE = "application/grpc+proto";

/** Headers of the HTTP/2 exchange itself, not of the call: never copied to a gRPC answer. */
const GRPC_EXCHANGE = new Set(["content-type", "content-length", "te", "grpc-encoding", "grpc-accept-encoding", "user-agent", "connection", "host"]);

/** Request headers that describe the REST exchange itself, not the call. */
const REST_EXCHANGE_REQUEST = new Set([
  "host", "connection", "keep-alive", "proxy-connection", "transfer-encoding", "upgrade", "te", "trailer", "expect",
  "content-type", "content-length", "content-encoding", "accept-encoding", "http2-settings",
]);

/** Answer headers the REST exchange writes itself or that mean nothing to a REST client. */
const REST_EXCHANGE_RESPONSE = new Set(["content-type", "content-length", "content-encoding", "accept-encoding", "connection", "transfer-encoding"]);

const isRpcProtocolHeader = (name: string) => name.startsWith("connect-") || name.startsWith("grpc-");

/** A request header's value as `Headers.get` gives it (several joined by ", "), null when absent. */
export function headerValue(value: string | string[] | undefined): string | null {
  return value === undefined ? null : Array.isArray(value) ? value.join(", ") : value;
}

/** The request headers a call on `wire` hands its handler. */
export function requestHeaders(incoming: NodeRequest["headers"], wire: Wire): Headers {
  const header = new Headers();
  for (const name in incoming) {
    const value = incoming[name];
    if (value === undefined || name.charCodeAt(0) === 58 /* ":" */) continue;
    if (wire === "rest" && (REST_EXCHANGE_REQUEST.has(name) || isRpcProtocolHeader(name))) continue;
    if (Array.isArray(value)) for (const v of value) header.append(name, v);
    else header.append(name, value);
  }
  if (wire === "grpc") header.set("content-type", GRPC_CONTENT_TYPE);
  if (wire === "rest") {
    header.set("content-type", "application/proto");
    header.set("connect-protocol-version", "1");
    injectTraceHeaders(header);
    const timeout = incoming["connect-timeout-ms"];
    if (typeof timeout === "string") header.set("connect-timeout-ms", timeout);
  }
  return header;
}

/** An answer's headers (or trailers) that go out on `wire`, as Node's `writeHead` and `addTrailers` take them. */
export function responseHeaders(headers: Headers, wire: Wire): ResponseHeaders {
  const out: ResponseHeaders = {};
  headers.forEach((value, given) => {
    const name = wire === "rest" && given.startsWith("trailer-") ? given.slice("trailer-".length) : given;
    if (wire === "grpc" && GRPC_EXCHANGE.has(name)) return;
    if (wire === "rest" && (REST_EXCHANGE_RESPONSE.has(name) || isRpcProtocolHeader(name))) return;
    const existing = out[name];
    out[name] = existing === undefined ? value : Array.isArray(existing) ? [...existing, value] : [existing, value];
  });
  return out;
}
