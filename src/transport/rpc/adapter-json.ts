import { brotliDecompressSync, gunzipSync } from "node:zlib";
import { fromJsonString } from "@bufbuild/protobuf";
import type { UniversalHandler, UniversalServerResponse } from "@connectrpc/connect/protocol";
import { messageJson } from "../../aip/message-json.js";
import { compressedIfAccepted, JSON_OPTIONS, negotiatedCompression } from "./connect-unary.js";

/**
 * connect-es's successful Connect unary JSON answers (the adapter's: GET, compressed requests)
 * written as every answer is (`messageJson`: zero values, timestamps with milliseconds), and
 * compressed as the Connect unary path compresses its own: the same bytes whichever path answered.
 * Binary, streaming and error answers are left as they are.
 */
export function withMessageJsonAnswers(handler: UniversalHandler): UniversalHandler {
  const output = handler.method.output;
  if (handler.method.methodKind !== "unary") return handler;
  const wrapped = async (req: Parameters<UniversalHandler>[0]): Promise<UniversalServerResponse> => {
    const res = await handler(req);
    const type = res.header?.get("content-type") ?? "";
    const body = res.body !== undefined && typeof res.body === "object" && Symbol.asyncIterator in res.body ? (res.body as AsyncIterable<Uint8Array>) : undefined;
    if (res.status !== 200 || !type.startsWith("application/json") || !body) return res;
    const chunks: Uint8Array[] = [];
    for await (const chunk of body) chunks.push(chunk);
    const encoding = res.header?.get("content-encoding") ?? null;
    const raw = Buffer.concat(chunks);
    const text = (encoding === "gzip" ? gunzipSync(raw) : encoding === "br" ? brotliDecompressSync(raw) : raw).toString("utf8");
    const rendered = Buffer.from(JSON.stringify(messageJson(output, fromJsonString(output, text, JSON_OPTIONS))));
    const out = compressedIfAccepted(rendered, negotiatedCompression(req.header.get("accept-encoding")));
    const bytes = await out.bytes;
    if (out.encoding === undefined) res.header?.delete("content-encoding");
    else res.header?.set("content-encoding", out.encoding);
    res.header?.set("content-length", String(bytes.byteLength));
    return { ...res, body: once(bytes) };
  };
  return Object.assign(wrapped, handler);
}

async function* once(bytes: Uint8Array): AsyncIterable<Uint8Array> {
  yield bytes;
}
