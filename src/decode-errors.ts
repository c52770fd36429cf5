import { Code, ConnectError } from "@connectrpc/connect";
import { encodeEnvelope, type UniversalHandler, type UniversalServerResponse } from "@connectrpc/connect/protocol";
import { errorToJsonBytes } from "@connectrpc/connect/protocol-connect";
import { setTrailerStatus } from "@connectrpc/connect/protocol-grpc";
import { trailerParse, trailerSerialize } from "@connectrpc/connect/protocol-grpc-web";
import { ApiError } from "./api/errors.js";
import { toConnectError } from "./interceptors/error-interceptor.js";
import type { Logger } from "./logger.js";

/** How connect-es words a request message it could not decode from binary. */
const PARSE_BINARY = "parse binary: ";
/** gRPC-Web's trailer frame flag. */
const TRAILER_FLAG = 0x80;

/**
 * A request message that is not valid protobuf (a truncated varint, an illegal wire
 * type, invalid UTF-8 in a string field) is the caller's fault: INVALID_ARGUMENT,
 * with an ErrorInfo like every other error. connect-es decodes the request before
 * any interceptor runs and answers INTERNAL ("parse binary: ..."), so this wrapper
 * rewrites exactly that answer: Connect unary (HTTP 500 JSON body), gRPC (trailers)
 * and gRPC-Web (the trailer frame). Other answers pass through untouched.
 */
export function withDecodeErrorsAsInvalidArgument(handler: UniversalHandler, logger: Logger, domain: string): UniversalHandler {
  const invalid = (cause: string) =>
    toConnectError(
      new ApiError("INVALID_ARGUMENT", `Invalid argument: the request is not a valid ${handler.method.input.typeName} message: ${cause}`),
      logger,
      domain,
    );
  const wrapped = async (req: Parameters<UniversalHandler>[0]): Promise<UniversalServerResponse> => {
    const res = await handler(req);
    const type = res.header?.get("content-type") ?? "";
    if (res.status === 500 && type.startsWith("application/json")) return fixConnectUnary(res, invalid);
    if (res.body && type.startsWith("application/grpc-web")) return { ...res, body: fixGrpcWebTrailer(res.body, invalid) };
    if (res.body && res.trailer && type.startsWith("application/grpc")) return { ...res, body: fixGrpcTrailer(res.body, res.trailer, invalid) };
    return res;
  };
  return Object.assign(wrapped, handler);
}

type Invalid = (cause: string) => ConnectError;

/** The decode failure's cause when `status`/`message` are connect-es's INTERNAL parse error. */
function parseFailure(code: string | null, message: string | null): string | undefined {
  if (code !== String(Code.Internal) || message === null) return undefined;
  let text: string;
  try {
    text = decodeURIComponent(message);
  } catch {
    return undefined;
  }
  return text.startsWith(PARSE_BINARY) ? text.slice(PARSE_BINARY.length) : undefined;
}

async function fixConnectUnary(res: UniversalServerResponse, invalid: Invalid): Promise<UniversalServerResponse> {
  const chunks: Uint8Array[] = [];
  for await (const chunk of res.body ?? []) chunks.push(chunk);
  let body: Uint8Array = Buffer.concat(chunks);
  let status = res.status;
  let error: { code?: string; message?: string } = {};
  try {
    error = JSON.parse(Buffer.from(body).toString("utf8")) as typeof error;
  } catch {
    // not connect-es's error body: pass it on
  }
  if (error.code === "internal" && error.message?.startsWith(PARSE_BINARY)) {
    const replacement = invalid(error.message.slice(PARSE_BINARY.length));
    body = errorToJsonBytes(replacement, undefined);
    status = 400;
    res.header?.set("content-length", String(body.byteLength));
  }
  return { ...res, status, body: (async function* () { yield body; })() };
}

async function* fixGrpcTrailer(body: AsyncIterable<Uint8Array>, trailer: Headers, invalid: Invalid): AsyncIterable<Uint8Array> {
  yield* body;
  const cause = parseFailure(trailer.get("grpc-status"), trailer.get("grpc-message"));
  if (cause !== undefined) setTrailerStatus(trailer, invalid(cause));
}

async function* fixGrpcWebTrailer(body: AsyncIterable<Uint8Array>, invalid: Invalid): AsyncIterable<Uint8Array> {
  for await (const chunk of body) {
    // connect-es yields whole envelopes; the trailer is the last one, uncompressed.
    if (chunk[0] !== TRAILER_FLAG) {
      yield chunk;
      continue;
    }
    const trailer = trailerParse(chunk.subarray(5));
    const cause = parseFailure(trailer.get("grpc-status"), trailer.get("grpc-message"));
    if (cause === undefined) {
      yield chunk;
      continue;
    }
    const fixed = new Headers();
    setTrailerStatus(fixed, invalid(cause));
    yield encodeEnvelope(TRAILER_FLAG, trailerSerialize(fixed));
  }
}
