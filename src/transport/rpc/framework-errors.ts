import { brotliDecompressSync, gunzipSync } from "node:zlib";
import { Code, ConnectError } from "@connectrpc/connect";
import { encodeEnvelope, type UniversalHandler, type UniversalServerResponse } from "@connectrpc/connect/protocol";
import { codeToHttpStatus, endStreamFlag, errorFromJson, errorToJson } from "@connectrpc/connect/protocol-connect";
import { findTrailerError, setTrailerStatus } from "@connectrpc/connect/protocol-grpc";
import { trailerFlag, trailerParse, trailerSerialize } from "@connectrpc/connect/protocol-grpc-web";
import { ErrorInfoSchema } from "../../../gen/google/rpc/error_details_pb.js";
import { toConnectError } from "../../interceptors/api-errors.js";
import type { Logger } from "../../logger.js";

type Request = Parameters<UniversalHandler>[0];
type Body = AsyncIterable<Uint8Array>;
/** The error an answer should carry instead of `error`, or undefined to leave the answer as it is. */
type Fix = (error: ConnectError) => ConnectError | undefined;

/** The envelope flag of a compressed message (all framed wires). */
const COMPRESSED = 0x01;

/**
 * connect-es answers some requests itself, before any interceptor runs: a body that
 * does not frame, decompress or decode, a body over the size limit, a bad timeout or
 * compression header, a unary call with no or two request messages. This wrapper
 * makes those answers follow the API's error rules (spec 7), through `toConnectError`
 * like every other error:
 * - a caller fault connect-es reports as INTERNAL is INVALID_ARGUMENT;
 * - every error answer without a google.rpc.ErrorInfo gets exactly one (reason the
 *   code's UPPER_SNAKE name, `domain`), its code and message kept. Errors that reached
 *   the error interceptor already have one and pass through byte for byte, as does
 *   every successful answer.
 * Wires: Connect unary (the JSON error body, POST and GET), Connect streaming (the
 * end-of-stream message), gRPC (trailers) and gRPC-Web (the trailer frame).
 * Cost on success: none for Connect unary and gRPC unary (the status is final when the
 * handler resolves, so the trailers are read then); gRPC-Web unary peeks at the first
 * frame; only streaming calls get their body wrapped.
 */
export function withFrameworkErrorsAsApiErrors(handler: UniversalHandler, logger: Logger, domain: string): UniversalHandler {
  const fix: Fix = (error) => fixFrameworkError(error, handler.method.input.typeName, logger, domain);
  const streaming = handler.method.methodKind !== "unary";
  const wrapped = async (req: Request): Promise<UniversalServerResponse> => {
    const res = await handler(req);
    const type = res.header?.get("content-type") ?? "";
    const body = res.body !== undefined && typeof res.body === "object" && Symbol.asyncIterator in res.body ? (res.body as Body) : undefined;
    if (!body) return res;
    if (type.startsWith("application/grpc-web")) {
      const encoding = res.header?.get("grpc-encoding") ?? null;
      return { ...res, body: streaming ? fixEachGrpcWebTrailer(body, encoding, fix) : await fixFirstGrpcWebTrailer(body, encoding, fix) };
    }
    if (type.startsWith("application/grpc")) {
      if (!res.trailer) return res;
      if (streaming) return { ...res, body: thenFixGrpcTrailer(body, res.trailer, fix) };
      fixGrpcTrailer(res.trailer, fix);
      return res;
    }
    if (type.startsWith("application/connect+")) {
      return { ...res, body: fixConnectEndStream(body, res.header?.get("connect-content-encoding") ?? null, fix) };
    }
    if (res.status !== 200 && type.startsWith("application/json")) return fixConnectUnary(res, body, fix);
    return res;
  };
  return Object.assign(wrapped, handler);
}

/**
 * `error` as the API's error rules want it (what `withFrameworkErrorsAsApiErrors` makes of an
 * answer's error), for the paths that run the implementations without the adapter (`callError`).
 */
export function frameworkErrorAsApiError(error: ConnectError, input: string, logger: Logger, domain: string): ConnectError {
  return fixFrameworkError(error, input, logger, domain) ?? error;
}

/**
 * The error to answer instead of `error`: undefined when it has an ErrorInfo (it went
 * through the error interceptor, or is ours), else what `toConnectError` makes of its
 * code and message (a caller fault INVALID_ARGUMENT, an ErrorInfo added). Its metadata
 * stays where connect-es put it (headers or trailers), so it is not copied.
 */
function fixFrameworkError(error: ConnectError, input: string, logger: Logger, domain: string): ConnectError | undefined {
  if (error.details.some((d) => ("desc" in d ? d.desc.typeName : d.type) === ErrorInfoSchema.typeName)) return undefined;
  return toConnectError(new ConnectError(error.rawMessage, error.code), logger, domain, input);
}

// ---- gRPC: the status is in the trailers ----

function fixGrpcTrailer(trailer: Headers, fix: Fix): void {
  const error = findTrailerError(trailer);
  const fixed = error && fix(error);
  if (fixed) setTrailerStatus(trailer, fixed);
}

async function* thenFixGrpcTrailer(body: Body, trailer: Headers, fix: Fix): Body {
  yield* body;
  fixGrpcTrailer(trailer, fix);
}

// ---- gRPC-Web: the status is in the last frame, flagged 0x80 ----

/** `chunk` (one whole envelope, as connect-es yields them) with its status fixed, or undefined when it is not a trailer frame that needs it. */
function fixGrpcWebTrailer(chunk: Uint8Array, encoding: string | null, fix: Fix): Uint8Array | undefined {
  if ((chunk[0] & trailerFlag) !== trailerFlag) return undefined;
  const data = chunk.subarray(5);
  let trailer: Headers;
  try {
    trailer = trailerParse((chunk[0] & COMPRESSED) === COMPRESSED ? decompress(data, encoding) : data);
  } catch {
    return undefined; // not a trailer connect-es wrote: pass it on
  }
  const error = findTrailerError(trailer);
  const fixed = error && fix(error);
  if (!fixed) return undefined;
  setTrailerStatus(trailer, fixed);
  return encodeEnvelope(trailerFlag, trailerSerialize(trailer));
}

/** Unary: the status is final once the first frame is out; an error answer is the trailer frame alone. */
async function fixFirstGrpcWebTrailer(body: Body, encoding: string | null, fix: Fix): Promise<Body> {
  const it = body[Symbol.asyncIterator]();
  let first: IteratorResult<Uint8Array> | undefined = await it.next();
  if (!first.done) first = { done: false, value: fixGrpcWebTrailer(first.value, encoding, fix) ?? first.value };
  return {
    [Symbol.asyncIterator]: () => ({
      next: () => {
        const next = first;
        first = undefined;
        return next ? Promise.resolve(next) : it.next();
      },
      return: (value?: unknown) => it.return?.(value) ?? Promise.resolve({ done: true, value: undefined }),
    }),
  };
}

async function* fixEachGrpcWebTrailer(body: Body, encoding: string | null, fix: Fix): Body {
  for await (const chunk of body) yield fixGrpcWebTrailer(chunk, encoding, fix) ?? chunk;
}

// ---- Connect: a JSON error body (unary), or the end-of-stream message (streaming) ----

async function fixConnectUnary(res: UniversalServerResponse, body: Body, fix: Fix): Promise<UniversalServerResponse> {
  const chunks: Uint8Array[] = [];
  for await (const chunk of body) chunks.push(chunk);
  const bytes = Buffer.concat(chunks);
  const same = { ...res, body: single(bytes) };
  const encoding = res.header?.get("content-encoding") ?? null;
  let json: unknown;
  try {
    json = JSON.parse(decompress(bytes, encoding).toString("utf8"));
  } catch {
    return same; // not connect-es's error body
  }
  const fixed = fixJsonError(json, fix);
  if (!fixed) return same;
  const out = Buffer.from(JSON.stringify(errorToJson(fixed, undefined)));
  res.header?.delete("content-encoding");
  res.header?.set("content-length", String(out.byteLength));
  return { ...res, status: codeToHttpStatus(fixed.code), body: single(out) };
}

async function* fixConnectEndStream(body: Body, encoding: string | null, fix: Fix): Body {
  for await (const chunk of body) {
    if ((chunk[0] & endStreamFlag) !== endStreamFlag) {
      yield chunk;
      continue;
    }
    const data = chunk.subarray(5);
    let end: { error?: unknown };
    try {
      end = JSON.parse(((chunk[0] & COMPRESSED) === COMPRESSED ? decompress(data, encoding) : Buffer.from(data)).toString("utf8")) as typeof end;
    } catch {
      yield chunk;
      continue;
    }
    const fixed = end.error === undefined ? undefined : fixJsonError(end.error, fix);
    yield fixed ? encodeEnvelope(endStreamFlag, Buffer.from(JSON.stringify({ ...end, error: errorToJson(fixed, undefined) }))) : chunk;
  }
}

/** The fixed error for a Connect error JSON (`{code, message, details}`), or undefined if it needs none or is not one. */
function fixJsonError(json: unknown, fix: Fix): ConnectError | undefined {
  let error: ConnectError;
  try {
    error = errorFromJson(json as Parameters<typeof errorFromJson>[0], undefined, new ConnectError("", Code.Unknown));
  } catch {
    return undefined;
  }
  return fix(error);
}

// ---- helpers ----

/** `data` inflated per the response's content coding (the codings connect-node offers: gzip, br). */
function decompress(data: Uint8Array, encoding: string | null): Buffer {
  if (encoding === "gzip") return gunzipSync(data);
  if (encoding === "br") return brotliDecompressSync(data);
  return Buffer.from(data);
}

async function* single(bytes: Uint8Array): Body {
  yield bytes;
}
