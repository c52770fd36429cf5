import { createContextKey } from "@connectrpc/connect";
import type { CallLife } from "../transport/rpc/call-life.js";

/** The wire protocol a call arrived on, for logs: set by the adapter or by the REST transcoder. */
export type WireProtocol = "grpc" | "grpc-web" | "connect" | "rest" | "in-process";

export const protocolKey = createContextKey<WireProtocol>("in-process", {
  description: "wire protocol of the call",
});

/**
 * The connection the call came on: its `remoteAddress` is the client's address (a proxy's, behind
 * one), read only for the audit line of an anonymous caller; undefined in-process.
 */
export const connectionKey = createContextKey<{ readonly remoteAddress?: string } | undefined>(undefined, {
  description: "the connection of the call",
});

/**
 * The call's life (deadline, end, lazily made signal) when the call runs on a direct path's core
 * (`createUnaryCaller`); undefined under the adapter, where the request's signal is it.
 */
export const callLifeKey = createContextKey<CallLife | undefined>(undefined, {
  description: "life of a unary call on a direct path",
});
