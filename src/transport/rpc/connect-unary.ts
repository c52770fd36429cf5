import { promisify } from "node:util";
import { brotliCompress, gzip } from "node:zlib";
import { fromBinary, fromJsonString, toBinary, type DescMethod, type Message } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import { getJsonOptions } from "@connectrpc/connect/protocol";
import { codeToHttpStatus, contentTypeUnaryJson, contentTypeUnaryProto, contentTypeUnaryRegExp, errorToJsonBytes, parseTimeout, trailerMux } from "@connectrpc/connect/protocol-connect";
import { BodyRefusedError, readBody } from "../http/body-reader.js";
import type { NodeHandler, NodeRequest, NodeResponse } from "../http/node-types.js";
import { encodedOnce } from "./encoded-once.js";
import { MAX_TIMEOUT_MS, startExchange, writeOrDestroy, type CallOutcome } from "./exchange.js";
import { headerValue, responseHeaders } from "./headers.js";
import { unaryMethodsByPath } from "./method-paths.js";
import { messageJson } from "../../aip/message-json.js";
import type { UnaryPathOptions } from "./options.js";

const gzipAsync = promisify(gzip);
const brotliAsync = promisify(brotliCompress);

/**
 * The JSON options of every Connect JSON call, this path's and the adapter's (server.ts gives it
 * these): connect-es's defaults, but a key naming no field is refused, not ignored (a misspelled
 * field must not be a silent no-op; protobuf-es stops at the first such key, which the error
 * interceptor's rules name in a BadRequest, `toConnectError`). Answers are written as every answer
 * is (`messageJson`): here by this path, through the adapter by `withMessageJsonAnswers`.
 */
export const JSON_OPTIONS = getJsonOptions({ ignoreUnknownFields: false });
/** The adapter's `compressMinBytes`: a smaller body is never compressed. */
const COMPRESS_MIN_BYTES = 1024;
/** The response compressions connect-node's adapter offers by default, in its order, at its zlib settings (none given). */
const COMPRESSIONS: Record<string, (bytes: Uint8Array) => Promise<Uint8Array>> = {
  gzip: (bytes) => gzipAsync(bytes, {}),
  br: (bytes) => brotliAsync(bytes, {}),
};
/** Request JSON is decoded with a BOM dropped and bad UTF-8 replaced, as the adapter decodes it. */
const UTF8 = new TextDecoder();

/** What the predicate learned of a request that takes this path. */
interface Taken {
  method: DescMethod;
  binary: boolean;
  timeoutMs: number | undefined;
  url: string;
}

/**
 * Connect unary POST calls answered on the HTTP request directly (HTTP/1.1 and HTTP/2): the body
 * read whole, decoded once, handed to the same implementations through the same interceptors as
 * every other wire (`options.call`), and the answer written exactly as connect-node's adapter with
 * `withFrameworkErrorsAsApiErrors` writes it: status, content type, the call's headers and its
 * trailers as `trailer-*` headers, `content-length`, the body compressed as the adapter negotiates
 * it (`accept-encoding`, gzip or br, 1 KiB and more); an error as `codeToHttpStatus`, its metadata
 * as headers and connect-es's JSON error body after `options.callError` (a rewritten error body is
 * never compressed, as `withFrameworkErrorsAsApiErrors` writes it).
 *
 * Taken only by a POST to exactly `/<service>/<Method>` of a served unary method (no query), with
 * a unary Connect content type (`application/json[; charset=utf-8]`, `application/proto`), no
 * `content-encoding` header at all (not even identity), a valid or absent `connect-timeout-ms`, an
 * absent or `1` `connect-protocol-version`, and a `content-length` within `maxBodyBytes` (the
 * adapter's `readMaxBytes`) or none (a body without one, as connect-es clients on Node send it, is
 * read up to `maxBodyBytes`, as the adapter reads it).
 * Everything else goes to `fallback` (the connect-es adapter) untouched.
 */
export function withConnectUnaryPath<Res>(options: UnaryPathOptions, fallback: NodeHandler<NodeRequest, Res>): NodeHandler<NodeRequest, Res> {
  const methods = unaryMethodsByPath(options.services);
  return (req, res) => {
    const taken = req.method === "POST" ? takenOf(req, methods.get(req.url ?? ""), options.maxBodyBytes) : undefined;
    if (taken === undefined) return fallback(req, res);
    return serve(options, taken, req, res as unknown as NodeResponse);
  };
}

/** What this path learns of a request it answers, or undefined when the adapter must answer it. */
function takenOf(req: NodeRequest, method: DescMethod | undefined, maxBodyBytes: number): Taken | undefined {
  if (method === undefined) return undefined;
  const headers = req.headers;
  const type = headers["content-type"];
  if (type === undefined || !contentTypeUnaryRegExp.test(type) || headers["content-encoding"] !== undefined) return undefined;
  const version = headers["connect-protocol-version"];
  if (version !== undefined && version !== "1") return undefined;
  const timeout = parseTimeout(headerValue(headers["connect-timeout-ms"]), MAX_TIMEOUT_MS);
  if (timeout.error) return undefined;
  // `content-length` is read with parseInt, as the adapter reads it.
  const given = headerValue(headers["content-length"]);
  const length = given === null ? undefined : parseInt(given, 10);
  if (length !== undefined && (!Number.isSafeInteger(length) || length < 0 || length > maxBodyBytes)) return undefined;
  // ctx.url as the adapter makes it.
  const authority = "authority" in req ? req.authority : headers.host;
  if (authority === undefined) return undefined;
  const scheme = "encrypted" in req.socket && req.socket.encrypted ? "https" : "http";
  let url: string;
  try {
    url = new URL(req.url ?? "", `${scheme}://${authority}`).toString();
  } catch {
    return undefined;
  }
  return { method, binary: /proto$/i.test(type), timeoutMs: timeout.timeoutMs, url };
}

async function serve(options: UnaryPathOptions, taken: Taken, req: NodeRequest, res: NodeResponse): Promise<void> {
  const { method, binary } = taken;
  // Started before the body is read: the deadline counts from the request's arrival, as the adapter's does.
  const exchange = startExchange(options, req, res, "connect", "the client closed the stream");
  const trailer = new Headers();
  const compression = compressionOf(req);
  const outcome = await exchange.run({
    method,
    input: async () => decode(method, binary, await readMessage(req, options.maxBodyBytes)),
    timeoutMs: taken.timeoutMs,
    url: taken.url,
    trailer,
    encode: (answer) => encodeAnswer(method, binary, answer.message, compression),
  });
  if (outcome !== undefined) await writeOrDestroy(res, () => write(res, outcome, binary, trailer, compression));
}

/** The answer as the adapter writes it: status, headers, the trailers as `trailer-*` headers, `content-length`, the body. */
async function write(res: NodeResponse, outcome: CallOutcome<Body>, binary: boolean, trailer: Headers, compression: string | undefined): Promise<void> {
  let status = 200;
  let header: Headers;
  let body: Body;
  if (outcome.error) {
    const { error, answered } = outcome;
    status = codeToHttpStatus(answered.code);
    header = outcome.answer?.header ?? new Headers();
    header.set("content-type", contentTypeUnaryJson);
    error.metadata.forEach((value, name) => header.set(name, value));
    // withFrameworkErrorsAsApiErrors writes a rewritten error body uncompressed; any other is as the adapter writes it.
    body = compressedIfAccepted(errorToJsonBytes(answered, undefined), answered === error ? compression : undefined);
  } else {
    header = outcome.answer.header;
    if (!header.has("content-type")) header.set("content-type", binary ? contentTypeUnaryProto : contentTypeUnaryJson);
    body = outcome.encoded;
  }
  const bytes = await body.bytes;
  if (res.destroyed) return;
  if (body.encoding !== undefined) header.set("content-encoding", body.encoding);
  const all = trailerMux(header, trailer);
  all.set("content-length", String(bytes.byteLength));
  res.writeHead(status, responseHeaders(all, "connect"));
  res.end(bytes);
}

/** An answer's body, and its content coding when compressed. */
export interface Body {
  bytes: Uint8Array | Promise<Uint8Array>;
  encoding?: string;
}

/** `bytes` compressed when the client accepts `compression` and they are 1 KiB or more. */
export function compressedIfAccepted(bytes: Uint8Array, compression: string | undefined): Body {
  if (compression === undefined || bytes.byteLength < COMPRESS_MIN_BYTES) return { bytes };
  return { bytes: COMPRESSIONS[compression](bytes), encoding: compression };
}

/**
 * A successful answer's body as connect-es encodes it (errors as its serialization raises them),
 * compressed as `compressedIfAccepted`; a cached answer is encoded, and compressed, once per format
 * (its compressed bytes are cached as one promise, shared by the calls that wait for it).
 */
function encodeAnswer(method: DescMethod, binary: boolean, message: Message, compression: string | undefined): Body {
  const format = binary ? "binary" : "connect json";
  const bytes = encodedOnce(message, format, () => (binary ? encodeBinary(method, message) : encodeJson(method, message)));
  if (compression === undefined || bytes.byteLength < COMPRESS_MIN_BYTES) return { bytes };
  return { bytes: encodedOnce(message, `${format} ${compression}`, () => COMPRESSIONS[compression](bytes)), encoding: compression };
}

function encodeBinary(method: DescMethod, message: Message): Uint8Array {
  try {
    return toBinary(method.output, message);
  } catch (e) {
    throw new ConnectError(`serialize binary: ${e instanceof Error ? e.message : String(e)}`, Code.Internal);
  }
}

function encodeJson(method: DescMethod, message: Message): Uint8Array {
  try {
    return Buffer.from(JSON.stringify(messageJson(method.output, message)));
  } catch (e) {
    throw ConnectError.from(e, Code.Internal);
  }
}

/** The request message, with connect-es's errors for a body that does not decode. */
function decode(method: DescMethod, binary: boolean, body: Uint8Array): Message {
  if (binary) {
    try {
      return fromBinary(method.input, body);
    } catch (e) {
      throw new ConnectError(`parse binary: ${e instanceof Error ? e.message : String(e)}`, Code.Internal);
    }
  }
  try {
    return fromJsonString(method.input, UTF8.decode(body), JSON_OPTIONS);
  } catch (e) {
    throw ConnectError.from(e, Code.InvalidArgument);
  }
}

/** The body, with connect-es's errors: exactly the bytes its `content-length` declares, or, without one, at most `max` bytes. */
async function readMessage(req: NodeRequest, max: number): Promise<Buffer> {
  try {
    return await readBody(req, max);
  } catch (e) {
    if (!(e instanceof BodyRefusedError) || e.reason === "aborted") throw e;
    if (e.reason === "too-large") throw new ConnectError(`message size is larger than configured readMaxBytes ${max}`, Code.ResourceExhausted);
    throw new ConnectError(`protocol error: promised ${e.declared} bytes, received ${e.received}`, Code.InvalidArgument);
  }
}

/** The response compression connect-es negotiates from `accept-encoding`: the first offered name it lists. */
function compressionOf(req: NodeRequest): string | undefined {
  return negotiatedCompression(headerValue(req.headers["accept-encoding"]));
}

/** The first name of an `accept-encoding` value that connect-es compresses with, or undefined. */
export function negotiatedCompression(accepted: string | null): string | undefined {
  if (accepted === null || accepted === "") return undefined;
  for (const name of accepted.split(",")) {
    const trimmed = name.trim();
    if (Object.hasOwn(COMPRESSIONS, trimmed)) return trimmed;
  }
  return undefined;
}
