import { create, createRegistry, fromBinary, isMessage, toJson } from "@bufbuild/protobuf";
import type { Registry } from "@bufbuild/protobuf";
import { AnySchema, anyPack } from "@bufbuild/protobuf/wkt";
import type { Any } from "@bufbuild/protobuf/wkt";
import { Code, ConnectError } from "@connectrpc/connect";
import { BadRequestSchema, ErrorInfoSchema, file_google_rpc_error_details } from "../../../gen/google/rpc/error_details_pb.js";
import { StatusSchema } from "../../../gen/google/rpc/status_pb.js";
import { codeName, type FieldViolation } from "../../aip/errors.js";
import type { BodyRefusedError } from "./body-reader.js";
import type { NodeRequest, NodeResponse, ResponseHeaders } from "./node-types.js";

/**
 * google.rpc.Status JSON bodies for REST answers, the errors the transcoder raises itself
 * (before any handler runs), and writing them to a Node response.
 */

const TYPE_URL_PREFIX = "type.googleapis.com/";

// Standard gRPC -> HTTP mapping (google/rpc/code.proto, grpc-gateway).
const HTTP_STATUS: Record<number, number> = {
  [Code.Canceled]: 499,
  [Code.Unknown]: 500,
  [Code.InvalidArgument]: 400,
  [Code.DeadlineExceeded]: 504,
  [Code.NotFound]: 404,
  [Code.AlreadyExists]: 409,
  [Code.PermissionDenied]: 403,
  [Code.ResourceExhausted]: 429,
  [Code.FailedPrecondition]: 400,
  [Code.Aborted]: 409,
  [Code.OutOfRange]: 400,
  [Code.Unimplemented]: 501,
  [Code.Internal]: 500,
  [Code.Unavailable]: 503,
  [Code.DataLoss]: 500,
  [Code.Unauthenticated]: 401,
};

/** HTTP status for a gRPC code: 0 -> 200, unknown codes -> 500. */
export function httpStatusFromCode(code: number): number {
  if (code === 0) return 200;
  return HTTP_STATUS[code] ?? 500;
}

/** Where a Status is written: the types its details may have, and the ErrorInfo domain of errors raised here. */
export interface StatusTarget {
  registry: Registry;
  /** Filled into an ErrorInfo whose domain is empty (errors raised outside the RPC interceptors). */
  domain: string;
}

/**
 * The google.rpc.Status JSON text of an error. Details are written as Any with `@type`;
 * a detail whose type is not in the target's registry, or whose bytes do not decode, is
 * skipped. An ErrorInfo without a domain gets the target's.
 */
export function statusJson(error: ConnectError, { registry, domain }: StatusTarget): string {
  const details: Any[] = [];
  for (const detail of error.details) {
    try {
      if ("desc" in detail) {
        if (registry.getMessage(detail.desc.typeName) === undefined) continue;
        const value = create(detail.desc, detail.value);
        if (isMessage(value, ErrorInfoSchema) && value.domain === "") value.domain = domain;
        details.push(anyPack(detail.desc, value));
      } else {
        const desc = registry.getMessage(detail.type);
        if (desc === undefined) continue;
        const value = fromBinary(desc, detail.value);
        if (isMessage(value, ErrorInfoSchema) && value.domain === "") {
          value.domain = domain;
          details.push(anyPack(ErrorInfoSchema, value));
        } else {
          details.push(create(AnySchema, { typeUrl: TYPE_URL_PREFIX + detail.type, value: detail.value }));
        }
      }
    } catch {
      // A detail that cannot be written is dropped; the status itself must still go out.
    }
  }
  const status = create(StatusSchema, { code: error.code, message: error.rawMessage, details });
  const json = toJson(StatusSchema, status, { registry }) as { details?: Record<string, unknown>[] };
  // "@type" first, as other google.rpc.Status writers do (key order carries no meaning).
  if (json.details) json.details = json.details.map(({ "@type": type, ...rest }) => ({ "@type": type, ...rest }));
  return JSON.stringify(json);
}


/**
 * INVALID_ARGUMENT with ErrorInfo (reason INVALID_ARGUMENT) and a BadRequest of the violations.
 * Errors made here leave ErrorInfo.domain empty: `statusJson` fills it in when they are written.
 */
export function invalidArgumentError(violations: readonly FieldViolation[]): ConnectError {
  const message = "Invalid argument: " + violations.map((v) => `${v.field}: ${v.description}`).join("; ");
  return new ConnectError(message, Code.InvalidArgument, undefined, [
    { desc: ErrorInfoSchema, value: { reason: "INVALID_ARGUMENT" } },
    { desc: BadRequestSchema, value: { fieldViolations: [...violations] } },
  ]);
}

/** An error with a single ErrorInfo detail (`reason` in UPPER_SNAKE). */
export function transcoderError(code: Code, reason: string, message: string, metadata?: HeadersInit): ConnectError {
  return new ConnectError(message, code, metadata, [
    { desc: ErrorInfoSchema, value: { reason } },
  ]);
}

/** Writes a Status JSON answer (content-type application/json); nothing if the response is gone. */
export function writeStatus(res: NodeResponse, httpStatus: number, error: ConnectError, target: StatusTarget, headers: ResponseHeaders = {}): void {
  writeJson(res, httpStatus, statusJson(error, target), headers);
}

/**
 * Answers a body `readBody` refused, on a route answering Status JSON (REST, the token exchange):
 * too large 413 RESOURCE_EXHAUSTED (reason REQUEST_TOO_LARGE), of the wrong length 400
 * INVALID_ARGUMENT; over HTTP/1.1 with `connection: close` when the rest of the body was left
 * unread. Writes nothing for a body the client cut short (the client is gone).
 */
export function writeBodyRefused(req: NodeRequest, res: NodeResponse, refused: BodyRefusedError, target: StatusTarget): void {
  if (refused.reason === "aborted") return;
  const headers: ResponseHeaders = refused.bodyUnread && req.httpVersionMajor === 1 ? { connection: "close" } : {};
  if (refused.reason === "too-large") {
    writeStatus(res, 413, transcoderError(Code.ResourceExhausted, "REQUEST_TOO_LARGE", `Request body larger than ${refused.maxBytes} bytes`), target, headers);
  } else {
    writeStatus(res, 400, transcoderError(Code.InvalidArgument, "INVALID_ARGUMENT", `Invalid argument: the request body is not the ${refused.declared} bytes its content-length declares`), target, headers);
  }
}

/**
 * Writes a JSON answer with its content-length and `headers` (later ones win); nothing if the
 * response is gone. A string body goes out as it is: over HTTP/1.1 Node then sends the head and the
 * body in one write.
 */
export function writeJson(res: NodeResponse, httpStatus: number, body: string | Buffer, ...headers: Array<ResponseHeaders | undefined>): void {
  if (res.destroyed) return;
  const length = typeof body === "string" ? Buffer.byteLength(body, "utf8") : body.byteLength;
  // Object.assign, not a literal with a spread and more fields (docs/performance.md).
  res.writeHead(httpStatus, Object.assign({}, ...headers, { "content-type": "application/json", "content-length": String(length) }));
  res.end(body);
}

const errorDetailsRegistry = createRegistry(file_google_rpc_error_details);

/**
 * Answers a plain HTTP route (not an RPC) with a google.rpc.Status body carrying one
 * ErrorInfo: `reason` defaults to the code's name (`NOT_FOUND`).
 * E.g. `sendStatus(res, 404, { code: 5, message: "Not found: ..." }, domain)`.
 */
export function sendStatus(
  res: NodeResponse,
  httpStatus: number,
  status: { code: number; message: string; reason?: string },
  domain: string,
  headers: ResponseHeaders = {},
): void {
  const reason = status.reason ?? codeName(status.code);
  writeStatus(res, httpStatus, transcoderError(status.code as Code, reason, status.message), { registry: errorDetailsRegistry, domain }, headers);
}
