import { fromBinary, toBinary, type DescMethod, type Message } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import { parseTimeout, setTrailerStatus } from "@connectrpc/connect/protocol-grpc";
import { BodyRefusedError, readBody } from "../http/body-reader.js";
import type { NodeHandler, NodeRequest, NodeResponse } from "../http/node-types.js";
import { encodedOnce } from "./encoded-once.js";
import { respecGrpcMessage } from "./grpc-message.js";
import { MAX_TIMEOUT_MS, startExchange, writeOrDestroy, type CallOutcome } from "./exchange.js";
import { GRPC_CONTENT_TYPE, headerValue, responseHeaders } from "./headers.js";
import { unaryMethodsByPath } from "./method-paths.js";
import type { UnaryPathOptions } from "./options.js";

/** The envelope before a gRPC message: a flags byte and its length. */
const ENVELOPE_BYTES = 5;

/**
 * gRPC unary calls answered on the HTTP/2 request directly: one buffered request message,
 * decoded once, handed to the same implementations through the same interceptors as every
 * other wire (`options.call`), and its answer written as one message and the status trailers,
 * as connect-es writes them (content type, headers, `grpc-status`, `grpc-message`,
 * `grpc-status-details-bin`; `grpc-message` percent-encoded as the gRPC spec says, not as connect-es
 * does). Responses are not compressed (a client may accept gzip; none has
 * to get it). Everything else goes to `fallback` (the connect-es adapter): other wires, HTTP/1,
 * streaming methods, unknown paths, JSON codec, a compressed request (`grpc-encoding`).
 */
export function withGrpcUnaryPath<Res>(options: UnaryPathOptions, fallback: NodeHandler<NodeRequest, Res>): NodeHandler<NodeRequest, Res> {
  const methods = unaryMethodsByPath(options.services);
  return (req, res) => {
    const type = req.headers["content-type"];
    const encoding = req.headers["grpc-encoding"];
    const method = req.httpVersionMajor === 2 && req.method === "POST" && (type === "application/grpc" || type === GRPC_CONTENT_TYPE) ? methods.get(req.url ?? "") : undefined;
    if (method === undefined || (encoding !== undefined && encoding !== "identity")) return fallback(req, res);
    return serve(options, method, req, res as unknown as NodeResponse);
  };
}

async function serve(options: UnaryPathOptions, method: DescMethod, req: NodeRequest, res: NodeResponse): Promise<void> {
  const exchange = startExchange(options, req, res, "grpc", "the client closed the stream");
  const max = options.maxBodyBytes;
  const timeout = parseTimeout(headerValue(req.headers["grpc-timeout"]), MAX_TIMEOUT_MS);
  const outcome = await exchange.run({
    method,
    input: async () => {
      const body = await readEnvelope(req, max);
      // A malformed grpc-timeout is answered once the body is read, before it is decoded.
      if (timeout.error) throw timeout.error;
      return decodeUnary(method, body, max);
    },
    timeoutMs: timeout.timeoutMs,
    url: `http://in-process${req.url}`,
    encode: (answer) => encodedOnce(answer.message, "binary", () => toBinary(method.output, answer.message)),
  });
  if (outcome !== undefined) await writeOrDestroy(res, () => write(res, outcome));
}

/** The answer: one message and status 0 in the trailers, or an error as a trailers-only status. */
function write(res: NodeResponse, outcome: CallOutcome<Uint8Array>): void {
  if (outcome.error) {
    res.writeHead(200, { "content-type": GRPC_CONTENT_TYPE });
    const trailers = responseHeaders(setTrailerStatus(new Headers(), outcome.answered), "grpc");
    respecGrpcMessage(trailers);
    res.addTrailers(trailers);
    res.end();
    return;
  }
  const { answer, encoded: bytes } = outcome;
  const frame = Buffer.allocUnsafe(ENVELOPE_BYTES + bytes.byteLength);
  frame[0] = 0;
  frame.writeUInt32BE(bytes.byteLength, 1);
  frame.set(bytes, ENVELOPE_BYTES);
  // Set on the fresh objects, not spread into literals with more fields (docs/performance.md).
  const head = responseHeaders(answer.header, "grpc");
  head["content-type"] = GRPC_CONTENT_TYPE;
  res.writeHead(200, head);
  const trailers = responseHeaders(answer.trailer, "grpc");
  trailers["grpc-status"] = "0";
  res.addTrailers(trailers);
  res.end(frame);
}

/** The request body, whole, with connect-es's errors for one over a message of `max` bytes and its envelope. */
async function readEnvelope(req: NodeRequest, max: number): Promise<Buffer> {
  try {
    return await readBody(req, max + ENVELOPE_BYTES);
  } catch (e) {
    if (!(e instanceof BodyRefusedError) || e.reason === "aborted") throw e;
    if (e.reason === "too-large") throw new ConnectError(`message size ${e.received - ENVELOPE_BYTES} is larger than configured readMaxBytes ${max}`, Code.ResourceExhausted);
    throw new ConnectError(`protocol error: promised ${e.declared} bytes, received ${e.received}`, Code.InvalidArgument);
  }
}

/** The one request message of a unary call, with connect-es's errors for a body that is not exactly one. */
function decodeUnary(method: DescMethod, body: Buffer, max: number): Message {
  if (body.byteLength === 0) throw new ConnectError("protocol error: missing input message for unary method", Code.Unimplemented);
  if (body.byteLength < ENVELOPE_BYTES) throw new ConnectError("protocol error: incomplete envelope", Code.InvalidArgument);
  const length = body.readUInt32BE(1);
  if (length > max) throw new ConnectError(`message size ${length} is larger than configured readMaxBytes ${max}`, Code.ResourceExhausted);
  if (body.byteLength < ENVELOPE_BYTES + length) throw new ConnectError("protocol error: incomplete envelope", Code.InvalidArgument);
  if (body.byteLength > ENVELOPE_BYTES + length) throw new ConnectError("protocol error: received extra input message for unary method", Code.Unimplemented);
  if ((body[0] & 0x01) === 0x01) throw new ConnectError("received compressed envelope, but do not know how to decompress", Code.Internal);
  try {
    return fromBinary(method.input, body.subarray(ENVELOPE_BYTES));
  } catch (e) {
    throw new ConnectError(`parse binary: ${e instanceof Error ? e.message : String(e)}`, Code.Internal);
  }
}
