import type { DescMethod, DescService } from "@bufbuild/protobuf";
import type { ConnectError, ContextValues } from "@connectrpc/connect";
import type { NodeRequest } from "../http/node-types.js";
import type { UnaryCaller } from "./call.js";

/** What every direct path (gRPC unary, Connect unary, REST) is given. */
export interface UnaryPathOptions {
  /** The services served: the unary methods the path takes (REST: those with HTTP rules). */
  services: DescService[];
  /** Calls an implementation through the interceptors (`createUnaryCaller`, named for the path's protocol). */
  call: UnaryCaller;
  /** Makes a failed call's error follow the API's error rules, as the adapter's answers do (`frameworkErrorAsApiError`); by default the error as it is. */
  callError?: (error: ConnectError, method: DescMethod) => ConnectError;
  /** The request's context values (the path sets `protocolKey` on them); by default none. */
  contextValues?: (req: NodeRequest) => ContextValues;
  /** The largest request body, bytes (gRPC: the one request message, its 5-byte envelope aside). */
  maxBodyBytes: number;
}
