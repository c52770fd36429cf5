import { createContextKey } from "@connectrpc/connect";
import type { CallLife } from "../transport/rpc/call-life.js";

/** The wire protocol a call arrived on, for logs: set by the adapter or by the REST transcoder. */
export type WireProtocol = "grpc" | "grpc-web" | "connect" | "rest" | "in-process";

export const protocolKey = createContextKey<WireProtocol>("in-process", {
  description: "wire protocol of the call",
});

/**
 * The call's life (deadline, end, lazily made signal) when the call runs on a direct path's core
 * (`createUnaryCaller`); undefined under connect-es's adapter, where the request's signal is it.
 */
export const callLifeKey = createContextKey<CallLife | undefined>(undefined, {
  description: "life of a unary call on a direct path",
});
