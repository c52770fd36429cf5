import type { NodeRequest } from "../http/node-types.js";

type Headers = Record<string, unknown> | undefined;

/**
 * The gRPC spec percent-encodes only the bytes of `grpc-message` outside
 * 0x20-0x7E and `%` itself. connect-es encodes every URI-reserved character
 * (`:` becomes `%3A`), which @grpc/grpc-js (it decodes with decodeURI) shows
 * its users verbatim. This re-encodes the header, in trailers and in
 * trailers-only responses, the way the spec says. (The gRPC unary path writes its own answers
 * with `respecGrpcMessage`; this wraps the adapter's.)
 */
export function withSpecGrpcMessage<Res>(handler: (req: NodeRequest, res: Res) => void): (req: NodeRequest, res: Res) => void {
  return (req, res) => {
    const type = req.headers["content-type"] ?? "";
    if (req.httpVersionMajor === 2 && type.startsWith("application/grpc") && !type.startsWith("application/grpc-web")) {
      const r = res as unknown as { writeHead(...args: unknown[]): unknown; addTrailers(t: Headers): void };
      const writeHead = r.writeHead;
      const addTrailers = r.addTrailers;
      r.writeHead = function (status: unknown, ...rest: unknown[]) {
        respecGrpcMessage(rest[rest.length - 1] as Headers);
        return writeHead.call(this, status, ...rest);
      };
      r.addTrailers = function (trailers: Headers) {
        respecGrpcMessage(trailers);
        return addTrailers.call(this, trailers);
      };
    }
    handler(req, res);
  };
}

/** Re-encodes the `grpc-message` of `headers` (connect-es's encoding) as the gRPC spec does, in place. */
export function respecGrpcMessage(headers: Headers): void {
  const message = headers?.["grpc-message"];
  if (typeof message !== "string") return;
  let decoded: string;
  try {
    decoded = decodeURIComponent(message);
  } catch {
    return;
  }
  headers!["grpc-message"] = encodeGrpcMessage(decoded);
}

/** Percent-encodes as the gRPC spec's Status-Message rule. */
export function encodeGrpcMessage(text: string): string {
  let out = "";
  for (const byte of Buffer.from(text, "utf8")) {
    out += byte >= 0x20 && byte <= 0x7e && byte !== 0x25 ? String.fromCharCode(byte) : `%${byte.toString(16).toUpperCase().padStart(2, "0")}`;
  }
  return out;
}
