import type { NodeRequest, ResponseHeaders } from "../http/node-types.js";
import { injectTraceContext } from "../../telemetry/tracing.js";

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
  return new RequestHeaders(incoming, wire);
}

/**
 * A request's headers as `requestHeaders` describes them, copied into the `Headers` only when a
 * caller changes or walks them: `get` and `has` (most calls ask only for `authorization`, a
 * request id and a timeout) answer from the request's own header object as the copy would, which
 * saves a `Headers.append` per header of every call.
 */
class RequestHeaders extends Headers {
  #incoming: NodeRequest["headers"] | undefined;
  readonly #wire: Wire;
  /** REST's Connect unary headers and trace context, by lower-case name, made with the call (the trace context is the one active now). */
  readonly #added: Record<string, string> | undefined;

  constructor(incoming: NodeRequest["headers"], wire: Wire) {
    super();
    this.#incoming = incoming;
    this.#wire = wire;
    if (wire === "rest") {
      const added: Record<string, string> = { "content-type": "application/proto", "connect-protocol-version": "1" };
      injectTraceContext(added);
      const timeout = incoming["connect-timeout-ms"];
      if (typeof timeout === "string") added["connect-timeout-ms"] = timeout;
      this.#added = added;
    }
  }

  /** Whether the request header `name` (lower case) reaches the handler on this wire. */
  #passes(name: string): boolean {
    if (name.charCodeAt(0) === 58 /* ":" */) return false;
    return this.#wire !== "rest" || !(REST_EXCHANGE_REQUEST.has(name) || isRpcProtocolHeader(name));
  }

  /** The copy: from here on, the `Headers` answer for themselves. */
  #copy(): void {
    const incoming = this.#incoming;
    if (incoming === undefined) return;
    this.#incoming = undefined;
    for (const name in incoming) {
      const value = incoming[name];
      if (value === undefined || !this.#passes(name)) continue;
      if (Array.isArray(value)) for (const v of value) super.append(name, v);
      else super.append(name, value);
    }
    if (this.#wire === "grpc") super.set("content-type", GRPC_CONTENT_TYPE);
    for (const name in this.#added) super.set(name, this.#added[name]);
  }

  override get(name: string): string | null {
    const incoming = this.#incoming;
    if (incoming === undefined) return super.get(name);
    const key = name.toLowerCase();
    if (this.#wire === "grpc" && key === "content-type") return GRPC_CONTENT_TYPE;
    const added = this.#added !== undefined && Object.hasOwn(this.#added, key) ? this.#added[key] : undefined;
    if (added !== undefined) return added;
    const raw = incoming[key];
    const value = (typeof raw === "string" || Array.isArray(raw)) && this.#passes(key) ? headerValue(raw) : null;
    // As `Headers` stores a value: without leading and trailing HTTP whitespace (looked for at the
    // two ends only: a regular expression walks the whole value, a bearer token's 500 characters).
    return value === null || value === "" || (!isHttpWhitespace(value.charCodeAt(0)) && !isHttpWhitespace(value.charCodeAt(value.length - 1)))
      ? value
      : value.replace(/^[\t\n\r ]+|[\t\n\r ]+$/g, "");
  }

  override has(name: string): boolean {
    return this.#incoming === undefined ? super.has(name) : this.get(name) !== null;
  }

  override append(name: string, value: string): void {
    this.#copy();
    super.append(name, value);
  }

  override set(name: string, value: string): void {
    this.#copy();
    super.set(name, value);
  }

  override delete(name: string): void {
    this.#copy();
    super.delete(name);
  }

  override getSetCookie(): string[] {
    this.#copy();
    return super.getSetCookie();
  }

  override forEach(callback: (value: string, key: string, parent: Headers) => void, thisArg?: unknown): void {
    this.#copy();
    super.forEach(callback, thisArg);
  }

  override keys(): HeadersIterator<string> {
    this.#copy();
    return super.keys();
  }

  override values(): HeadersIterator<string> {
    this.#copy();
    return super.values();
  }

  override entries(): HeadersIterator<[string, string]> {
    this.#copy();
    return super.entries();
  }

  override [Symbol.iterator](): HeadersIterator<[string, string]> {
    this.#copy();
    return super[Symbol.iterator]();
  }
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

/** Tab, line feed, carriage return or space: the whitespace `Headers` trims from a value's ends. */
function isHttpWhitespace(code: number): boolean {
  return code === 32 || code === 9 || code === 10 || code === 13;
}
