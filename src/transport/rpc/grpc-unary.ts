import { fromBinary, toBinary, type DescMethod, type DescService, type Message } from "@bufbuild/protobuf";
import { Code, ConnectError, type ContextValues } from "@connectrpc/connect";
import { parseTimeout, setTrailerStatus } from "@connectrpc/connect/protocol-grpc";
import { encodedOnce } from "./encoded-once.js";
import type { NodeRequest, NodeResponse } from "../http/node-types.js";
import { BodyRefusedError, readBody } from "../http/body-reader.js";
import { abortedWhenClientLeaves, callHeaders, headerValue, MAX_TIMEOUT_MS, unaryMethodsByPath } from "./request.js";
import type { UnaryAnswer, UnaryCaller } from "./call.js";

/** The content type of every answer, as connect-es writes it for binary gRPC. */
const CONTENT_TYPE = "application/grpc+proto";
/** Headers of the HTTP/2 exchange itself, not of the call: not shown to the handler, not copied to the answer. */
const HOP_HEADERS = new Set(["content-type", "content-length", "te", "grpc-encoding", "grpc-accept-encoding", "user-agent", "connection", "host"]);

export interface GrpcUnaryPathOptions {
  /** The services served; their unary methods take this path. */
  services: DescService[];
  /** Calls an implementation through the interceptors (`createUnaryCaller` with protocol "grpc"). */
  call: UnaryCaller;
  /** Makes an error follow the API's error rules, as the adapter's answers do (`frameworkErrorAsApiError`). */
  callError: (error: ConnectError, method: DescMethod) => ConnectError;
  /** The context values of an RPC, as the adapter makes them. */
  contextValues: (req: NodeRequest) => ContextValues;
  /** A larger request message is RESOURCE_EXHAUSTED. */
  readMaxBytes: number;
}

/**
 * gRPC unary calls answered on the HTTP/2 request directly: one buffered request message,
 * decoded once, handed to the same implementations through the same interceptors as every
 * other wire (`options.call`), and its answer written as one message and the status trailers,
 * as connect-es writes them (content type, headers, `grpc-status`, `grpc-message`,
 * `grpc-status-details-bin`). Responses are not compressed (a client may accept gzip; none has
 * to get it). Everything else goes to `fallback` (the connect-es adapter): other wires, HTTP/1,
 * streaming methods, unknown paths, JSON codec, a compressed request (`grpc-encoding`).
 */
export function withGrpcUnaryPath<Res>(options: GrpcUnaryPathOptions, fallback: (req: NodeRequest, res: Res) => void): (req: NodeRequest, res: Res) => void {
  const methods = unaryMethodsByPath(options.services);
  return (req, res) => {
    const type = req.headers["content-type"];
    const encoding = req.headers["grpc-encoding"];
    const method = req.httpVersionMajor === 2 && req.method === "POST" && (type === "application/grpc" || type === "application/grpc+proto") ? methods.get(req.url ?? "") : undefined;
    if (method === undefined || (encoding !== undefined && encoding !== "identity")) return fallback(req, res);
    void serve(options, method, req, res as unknown as NodeResponse);
  };
}

async function serve(options: GrpcUnaryPathOptions, method: DescMethod, req: NodeRequest, res: NodeResponse): Promise<void> {
  const controller = abortedWhenClientLeaves(res, "the client closed the stream");
  let answer: UnaryAnswer;
  try {
    try {
      const arrived = Date.now();
      const timeout = parseTimeout(headerValue(req.headers["grpc-timeout"]), MAX_TIMEOUT_MS);
      const body = await readEnvelopes(req, options.readMaxBytes);
      if (timeout.error) throw timeout.error;
      const input = decodeUnary(method, body, options.readMaxBytes);
      answer = await options.call(method, {
        input,
        header: requestHeaders(req.headers),
        controller,
        contextValues: options.contextValues(req),
        // The deadline counts from the request's arrival, as the adapter's.
        timeoutMs: timeout.timeoutMs === undefined ? undefined : timeout.timeoutMs - (Date.now() - arrived),
        url: `http://in-process${req.url}`,
      });
    } catch (e) {
      if (res.destroyed || (e instanceof BodyRefusedError && e.reason === "aborted")) return void res.destroy();
      const error = e instanceof ConnectError ? e : new ConnectError("internal error", Code.Internal, undefined, undefined, e);
      const trailer = new Headers();
      setTrailerStatus(trailer, options.callError(error, method));
      res.writeHead(200, { "content-type": CONTENT_TYPE });
      res.addTrailers(plain(trailer));
      res.end();
      return;
    }
    if (res.destroyed) return;
    const bytes = encodedOnce(answer.message, "binary", () => toBinary(method.output, answer.message));
    const frame = Buffer.allocUnsafe(5 + bytes.byteLength);
    frame[0] = 0;
    frame.writeUInt32BE(bytes.byteLength, 1);
    frame.set(bytes, 5);
    res.writeHead(200, { ...plain(answer.header), "content-type": CONTENT_TYPE });
    res.addTrailers({ ...plain(answer.trailer), "grpc-status": "0" });
    res.end(frame);
  } catch {
    // Writing failed: the stream is gone.
    if (!res.destroyed) res.destroy();
  }
}

/** The request body, whole; RESOURCE_EXHAUSTED beyond one message of `max` bytes and its envelope. */
async function readEnvelopes(req: NodeRequest, max: number): Promise<Buffer> {
  try {
    return await readBody(req, max + 5);
  } catch (e) {
    if (!(e instanceof BodyRefusedError) || e.reason === "aborted") throw e;
    if (e.reason === "too-large") throw new ConnectError(`message size ${e.received - 5} is larger than configured readMaxBytes ${max}`, Code.ResourceExhausted);
    throw new ConnectError(`protocol error: promised ${e.declared} bytes, received ${e.received}`, Code.InvalidArgument);
  }
}

/** The one request message of a unary call, with connect-es's errors for a body that is not exactly one. */
function decodeUnary(method: DescMethod, body: Buffer, max: number): Message {
  if (body.byteLength === 0) throw new ConnectError("protocol error: missing input message for unary method", Code.Unimplemented);
  if (body.byteLength < 5) throw new ConnectError("protocol error: incomplete envelope", Code.InvalidArgument);
  const length = body.readUInt32BE(1);
  if (length > max) throw new ConnectError(`message size ${length} is larger than configured readMaxBytes ${max}`, Code.ResourceExhausted);
  if (body.byteLength < 5 + length) throw new ConnectError("protocol error: incomplete envelope", Code.InvalidArgument);
  if (body.byteLength > 5 + length) throw new ConnectError("protocol error: received extra input message for unary method", Code.Unimplemented);
  if ((body[0] & 0x01) === 0x01) throw new ConnectError("received compressed envelope, but do not know how to decompress", Code.Internal);
  try {
    return fromBinary(method.input, body.subarray(5));
  } catch (e) {
    throw new ConnectError(`parse binary: ${e instanceof Error ? e.message : String(e)}`, Code.Internal);
  }
}

/** The call's request headers: the caller's, without HTTP/2 pseudo-headers, the content type as connect-es names it. */
function requestHeaders(incoming: NodeRequest["headers"]): Headers {
  const header = callHeaders(incoming);
  header.set("content-type", CONTENT_TYPE);
  return header;
}

/** Headers as a Node header object; the exchange's own headers left out. */
function plain(headers: Headers): Record<string, string> {
  const out: Record<string, string> = {};
  headers.forEach((value, name) => {
    if (!HOP_HEADERS.has(name)) out[name] = value;
  });
  return out;
}
