import { randomUUID } from "node:crypto";
import { createContextKey } from "@connectrpc/connect";
import type { NodeRequest } from "../transport/http/node-types.js";

/** The request id of a call (set by the adapter and the REST transcoder from `requestIdOf`); "" in-process. */
export const requestIdKey = createContextKey<string>("", { description: "request id of the call, for logs" });

/** The request and response header that carries the id. */
export const REQUEST_ID_HEADER = "x-request-id";

const ID = Symbol("requestId");
/** A caller's id is kept when it is 1 to 128 visible ASCII characters (a UUID, a proxy's or a load balancer's id). */
const USABLE = /^[\x21-\x7e]{1,128}$/;

/**
 * The id of an HTTP request: the caller's `x-request-id` when usable, else a new UUID. The same
 * value for every call on the same request object (the fallback's log line and the REST call it
 * makes share it).
 */
export function requestIdOf(req: NodeRequest): string {
  const held = req as NodeRequest & { [ID]?: string };
  const known = held[ID];
  if (known !== undefined) return known;
  const given = req.headers[REQUEST_ID_HEADER];
  const id = typeof given === "string" && USABLE.test(given) ? given : randomUUID();
  held[ID] = id;
  return id;
}

/** A usable id from a header value, else a new UUID (for calls that reach the interceptors without an HTTP request). */
export function requestIdFromHeader(value: string | null): string {
  return value !== null && USABLE.test(value) ? value : randomUUID();
}
