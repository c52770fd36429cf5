import { create, type DescMessage, type MessageInitShape } from "@bufbuild/protobuf";
import { Code, ConnectError, type StreamRequest, type UnaryRequest } from "@connectrpc/connect";
import {
  BadRequestSchema,
  ErrorInfoSchema,
  PreconditionFailureSchema,
  ResourceInfoSchema,
} from "../../gen/google/rpc/error_details_pb.js";
import { apiErrorOf } from "../aip/store-errors.js";
import { StoreError } from "../store/errors.js";
import { ApiError, codeName, invalidField, resourceExhausted, unavailable, type ErrorKind } from "../aip/errors.js";
import { isStorageFull, isUnavailable } from "../store/dialect.js";

import { withFields, type Logger } from "../logger.js";
import { requestIdKey } from "../telemetry/request-id.js";

type OutgoingDetail = { desc: DescMessage; value: MessageInitShape<DescMessage> };

const CODES: Record<ErrorKind, Code> = {
  INVALID_ARGUMENT: Code.InvalidArgument,
  NOT_FOUND: Code.NotFound,
  ALREADY_EXISTS: Code.AlreadyExists,
  FAILED_PRECONDITION: Code.FailedPrecondition,
  PERMISSION_DENIED: Code.PermissionDenied,
  UNAUTHENTICATED: Code.Unauthenticated,
  RESOURCE_EXHAUSTED: Code.ResourceExhausted,
  DEADLINE_EXCEEDED: Code.DeadlineExceeded,
  UNAVAILABLE: Code.Unavailable,
};


/**
 * Errors connect-es raises as INTERNAL although the caller is at fault, recognized by
 * their message, and the INVALID_ARGUMENT message that replaces each. They come from
 * decoding the request, before or (for streaming calls) inside the interceptors.
 */
const CALLER_FAULTS: Array<{ match: (message: string) => boolean; message: (raw: string, input: string) => string }> = [
  // The request message is not valid protobuf (a truncated varint, an illegal wire type, bad UTF-8).
  {
    match: (m) => m.startsWith("parse binary: "),
    message: (m, input) => `Invalid argument: the request is not a valid ${input} message: ${m.slice("parse binary: ".length)}`,
  },
  // A frame flagged compressed on a call that names no compression (no grpc-encoding or connect-content-encoding).
  {
    match: (m) => m === "received compressed envelope, but do not know how to decompress",
    message: () => "Invalid argument: a request message is flagged compressed, but the request names no compression",
  },
  // Compressed bytes the named compression cannot inflate (zlib's data errors come as INVALID_ARGUMENT already).
  {
    match: (m) => m === "decompression failed",
    message: () => "Invalid argument: a compressed request message does not decompress",
  },
];

/** protobuf-es refusing a JSON key that names no field (Connect JSON; its decoder stops at the first). */
const UNKNOWN_JSON_KEY = /^cannot decode message (\S+) from JSON: key "(.*)" is unknown$/;

/**
 * Turns any error into a ConnectError carrying exactly one ErrorInfo (of `domain`) plus
 * the detail its kind calls for (spec 7). A store that is unreachable or locked
 * is UNAVAILABLE (retryable). connect-es's INTERNAL errors that are the caller's fault
 * (`CALLER_FAULTS`; `input` names the request message type) are INVALID_ARGUMENT.
 * Unknown errors become INTERNAL with a generic message; their cause is logged, never sent.
 */
export function toConnectError(error: unknown, logger: Logger, domain: string, input = "request"): ConnectError {
  if (error instanceof StoreError) error = apiErrorOf(error);
  if (error instanceof ConnectError && error.code === Code.Internal) {
    const fault = CALLER_FAULTS.find((f) => f.match(error.rawMessage));
    if (fault) return toConnectError(new ApiError("INVALID_ARGUMENT", fault.message(error.rawMessage, input)), logger, domain);
  }
  if (error instanceof ApiError) {
    const details: OutgoingDetail[] = [
      { desc: ErrorInfoSchema, value: create(ErrorInfoSchema, { reason: error.reason, domain, metadata: error.metadata }) },
    ];
    if (error.fieldViolations.length > 0) {
      details.push({ desc: BadRequestSchema, value: create(BadRequestSchema, { fieldViolations: error.fieldViolations }) });
    }
    if (error.preconditionViolations.length > 0) {
      details.push({ desc: PreconditionFailureSchema, value: create(PreconditionFailureSchema, { violations: error.preconditionViolations }) });
    }
    if (error.resource) {
      details.push({
        desc: ResourceInfoSchema,
        value: create(ResourceInfoSchema, {
          resourceType: error.resource.type,
          resourceName: error.resource.name,
          description: error.resource.description ?? "",
        }),
      });
    }
    return new ConnectError(error.message, CODES[error.kind], undefined, details, error);
  }
  if (error instanceof ConnectError) {
    if (error.code === Code.Internal || error.code === Code.Unknown) return internal(error, logger, domain);
    const unknown = error.code === Code.InvalidArgument ? UNKNOWN_JSON_KEY.exec(error.rawMessage) : null;
    if (unknown) return toConnectError(invalidField(unknown[2], `Unknown name "${unknown[2]}": ${unknown[1]} has no such field`), logger, domain);
    if (error.findDetails(ErrorInfoSchema).length > 0) return error;
    const info = create(ErrorInfoSchema, { reason: codeName(error.code), domain });
    return new ConnectError(error.rawMessage, error.code, error.metadata, [{ desc: ErrorInfoSchema, value: info }], error);
  }
  if (isStorageFull(error)) {
    logger.error("the store cannot write: its storage is full", { error: String(error) });
    return toConnectError(resourceExhausted("STORAGE_FULL", "the server's storage is full; nothing was written"), logger, domain);
  }
  if (isUnavailable(error)) {
    logger.warn("store unavailable", { error: String(error) });
    return toConnectError(unavailable("the database is busy or unreachable; retry"), logger, domain);
  }
  return internal(error, logger, domain);
}

function internal(cause: unknown, logger: Logger, domain: string): ConnectError {
  logger.error("internal error", { error: cause instanceof Error ? (cause.stack ?? cause.message) : String(cause) });
  const info = create(ErrorInfoSchema, { reason: "INTERNAL", domain });
  return new ConnectError("Internal error", Code.Internal, undefined, [{ desc: ErrorInfoSchema, value: info }]);
}

/** A call's failure as the API answers it (`toConnectError`), logged with the call's request id when it is unexpected. */
export function callErrorOf(error: unknown, req: UnaryRequest | StreamRequest, logger: Logger, domain: string): ConnectError {
  return toConnectError(error, withFields(logger, { requestId: req.contextValues.get(requestIdKey) }), domain, req.method.input.typeName);
}
