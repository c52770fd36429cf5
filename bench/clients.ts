import { createHash, type Hash } from "node:crypto";
import http from "node:http";
import { fromBinary, fromJson, toBinary, toJson, type DescMethod, type JsonObject, type JsonValue } from "@bufbuild/protobuf";
import { createClient } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import * as grpc from "@grpc/grpc-js";

/**
 * Per-protocol callers: the same client code calls our server and the
 * protocol's baseline. Everything constant about a call (path, request
 * message, headers) is prepared once in `bind`; each `call` then does what a
 * real client does per call (encode, send, receive, decode).
 */

/** One unary RPC, described for every protocol; or a plain HTTP route (no `method`). */
export interface RpcCase {
  /** Absent for a plain HTTP route (the registry host's), which only the rest and http clients call. */
  method?: DescMethod;
  /** The request as proto JSON (RPC protocols). */
  request: JsonObject;
  /** The REST path with its query string (GET, no body). */
  restPath: string;
  /** Sent as `Authorization: Bearer <token>` when set. */
  token?: string;
  /**
   * What the rest and http clients do with a response body: `json` (the default) buffers
   * and parses it; `count` streams it, counts its bytes against `Content-Length` and
   * discards them, resolving with the count (for blobs: no 50 MB buffer per call).
   */
  body?: "json" | "count";
}

/** What `Endpoint.verify` resolves with for a `count` body: the answer's status, headers, size and digest. */
export interface VerifiedBody {
  status: number;
  headers: Record<string, string>;
  bytes: number;
  /** `sha256:<hex>` of the body. */
  digest: string;
}

/** A bound call. */
export interface Endpoint {
  /** Resolves with the decoded response; rejects on any non-success outcome. */
  call(): Promise<unknown>;
  /** The response `call` (or `verify`) resolved with, as proto JSON (for verification). */
  json(response: unknown): JsonValue;
  /**
   * When set, the bench verifies a figure with this call instead of `call`: one that
   * also hashes the body (a VerifiedBody), too costly to do on every call.
   */
  verify?(): Promise<unknown>;
}

export interface ProtocolClient {
  bind(rpc: RpcCase): Endpoint;
  /** Releases connections. */
  close(): void;
}

/** `http` is the `rest` client (a plain GET) calling a route outside the API host: the registry host. */
export type Protocol = "grpc" | "connect-h1" | "connect-h2" | "rest" | "http";

function rpcMethod(rpc: RpcCase): DescMethod {
  if (!rpc.method) throw new Error(`${rpc.restPath} is a plain HTTP route, not an RPC: call it with the rest or http client`);
  return rpc.method;
}

/** A @grpc/grpc-js client: one HTTP/2 connection, protobuf-es (de)serializers. */
export function grpcClient(port: number): ProtocolClient {
  const client = new grpc.Client(`127.0.0.1:${port}`, grpc.credentials.createInsecure());
  return {
    bind(rpc) {
      const { request, token } = rpc;
      const method = rpcMethod(rpc);
      const path = `/${method.parent.typeName}/${method.name}`;
      const message = fromJson(method.input, request);
      const serialize = (m: typeof message) => Buffer.from(toBinary(method.input, m));
      const deserialize = (bytes: Buffer) => fromBinary(method.output, bytes);
      return {
        call: () =>
          new Promise((resolve, reject) => {
            const metadata = new grpc.Metadata();
            if (token) metadata.set("authorization", `Bearer ${token}`);
            client.makeUnaryRequest(path, serialize, deserialize, message, metadata, (error, response) =>
              error ? reject(new Error(`gRPC ${grpc.status[error.code]}: ${error.details}`)) : resolve(response),
            );
          }),
        json: (response) => toJson(method.output, response as never),
      };
    },
    close: () => client.close(),
  };
}

/**
 * A Connect client, JSON encoding, over HTTP/1.1 (Node's global keep-alive
 * agent: one connection per call in flight) or HTTP/2 (one h2c connection).
 */
export function connectClient(port: number, httpVersion: "1.1" | "2"): ProtocolClient {
  const transport = createConnectTransport({ baseUrl: `http://127.0.0.1:${port}`, httpVersion, useBinaryFormat: false });
  return {
    bind(rpc) {
      const { request, token } = rpc;
      const method = rpcMethod(rpc);
      const client = createClient(method.parent, transport) as unknown as Record<string, (req: unknown, options: unknown) => Promise<unknown>>;
      const call = client[method.localName];
      const message = fromJson(method.input, request);
      const headers: Record<string, string> = token ? { authorization: `Bearer ${token}` } : {};
      return {
        call: () => call(message, { headers }),
        json: (response) => toJson(method.output, response as never),
      };
    },
    close: () => {},
  };
}

/**
 * A GET whose body is streamed and counted (and hashed when `hash` is given), never
 * buffered. Rejects on any status but 200 and on a body shorter or longer than its
 * `Content-Length`; resolves with the response and the byte count.
 */
function countedGet(options: http.RequestOptions, hash?: Hash): Promise<{ res: http.IncomingMessage; bytes: number }> {
  return new Promise((resolve, reject) => {
    const req = http.request(options, (res) => {
      res.on("error", reject);
      if (res.statusCode !== 200) {
        const chunks: Buffer[] = [];
        res.on("data", (chunk: Buffer) => chunks.push(chunk));
        res.on("end", () => reject(new Error(`HTTP ${res.statusCode}: ${Buffer.concat(chunks).toString("utf8").slice(0, 200)}`)));
        return;
      }
      let bytes = 0;
      res.on("data", (chunk: Buffer) => {
        bytes += chunk.length;
        hash?.update(chunk);
      });
      res.on("end", () => {
        const length = res.headers["content-length"];
        if (length !== undefined && Number(length) !== bytes) return reject(new Error(`got ${bytes} bytes of a ${length}-byte body`));
        resolve({ res, bytes });
      });
    });
    req.on("error", reject);
    req.end();
  });
}

/** Plain `node:http` GET requests on a keep-alive agent; only HTTP 200 is a success. */
export function restClient(port: number): ProtocolClient {
  const agent = new http.Agent({ keepAlive: true });
  return {
    bind({ restPath, token, body }) {
      const options: http.RequestOptions = {
        agent,
        host: "127.0.0.1",
        port,
        path: restPath,
        method: "GET",
        headers: token ? { authorization: `Bearer ${token}` } : {},
      };
      if (body === "count") {
        return {
          call: async () => (await countedGet(options)).bytes,
          verify: async (): Promise<VerifiedBody> => {
            const hash = createHash("sha256");
            const { res, bytes } = await countedGet(options, hash);
            const headers = Object.fromEntries(Object.entries(res.headers).filter((entry): entry is [string, string] => typeof entry[1] === "string"));
            return { status: res.statusCode ?? 0, headers, bytes, digest: `sha256:${hash.digest("hex")}` };
          },
          json: (response) => response as JsonValue,
        };
      }
      return {
        call: () =>
          new Promise((resolve, reject) => {
            const req = http.request(options, (res) => {
              const chunks: Buffer[] = [];
              res.on("data", (chunk: Buffer) => chunks.push(chunk));
              res.on("error", reject);
              res.on("end", () => {
                const text = Buffer.concat(chunks).toString("utf8");
                if (res.statusCode !== 200) return reject(new Error(`HTTP ${res.statusCode}: ${text.slice(0, 200)}`));
                try {
                  resolve(JSON.parse(text));
                } catch (error) {
                  reject(error);
                }
              });
            });
            req.on("error", reject);
            req.end();
          }),
        json: (response) => response as JsonValue,
      };
    },
    close: () => agent.destroy(),
  };
}

/** The client of `protocol` for a server on `port` (its HTTP/2 port for grpc and connect-h2, the registry port for http). */
export function clientFor(protocol: Protocol, port: number): ProtocolClient {
  switch (protocol) {
    case "grpc":
      return grpcClient(port);
    case "connect-h1":
      return connectClient(port, "1.1");
    case "connect-h2":
      return connectClient(port, "2");
    case "rest":
    case "http":
      return restClient(port);
  }
}
