import { createContextKey } from "@connectrpc/connect";

/** The wire protocol a call arrived on, for logs: set by the adapter or by the REST transcoder. */
export type WireProtocol = "grpc" | "grpc-web" | "connect" | "rest" | "in-process";

export const protocolKey = createContextKey<WireProtocol>("in-process", {
  description: "wire protocol of the call",
});
