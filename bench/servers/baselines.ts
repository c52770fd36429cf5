import { createReadStream } from "node:fs";
import http from "node:http";
import http2 from "node:http2";
import type { AddressInfo } from "node:net";
import { pipeline } from "node:stream/promises";
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { connectNodeAdapter } from "@connectrpc/connect-node";
import * as grpc from "@grpc/grpc-js";
import { PingRequestSchema, PingResponseSchema, PingService, type PingRequest, type PingResponse } from "../../gen/platform/ping/v2/ping_pb.js";
import { announce } from "./messages.js";
import { blobHeaders, blobPath, MANIFEST_PATH, manifestHeaders, type SeededImage } from "./oci-image.js";
import { HISTORY_PATH, historyBody } from "./tag-history.js";

/**
 * Minimal servers answering Ping the way ours does, to compare the platform
 * server with what the same client gets from the framework (or the runtime) alone.
 * `argv[2]` picks one; each announces a BaselineReady:
 * - `connect`: connectNodeAdapter with a trivial PingService and no interceptors,
 *   on node:http (h1Port) and node:http2 h2c (h2Port; serves gRPC too);
 * - `grpc`: a @grpc/grpc-js server with one Ping handler and protobuf-es
 *   serializers (h2Port);
 * - `http`: a node:http route answering `GET /ping/v2/ping` with `{"response":"pong"}`,
 *   one answering `GET <HISTORY_PATH>` with the registry's Tag History body, computed once
 *   and sent with the registry's headers, and, given the platform server's SeededImage as
 *   JSON in `argv[3]`, one answering `GET <MANIFEST_PATH>` with the manifest's bytes and one
 *   answering `GET <blobPath(layer)>` by streaming the layer's file (the one the platform's
 *   content store wrote) with `fs.createReadStream`, as the content store reads it, both
 *   with the registry's headers (h1Port).
 */

type Listenable = { listen(port: number, host: string, cb: () => void): unknown; address(): AddressInfo | string | null };

function listen(server: Listenable): Promise<number> {
  return new Promise((resolve) => server.listen(0, "127.0.0.1", () => resolve((server.address() as AddressInfo).port)));
}

async function connectBaseline() {
  const handler = connectNodeAdapter({
    routes: (router) => router.service(PingService, { ping: () => ({ response: "pong" }) }),
  });
  announce({ kind: "baseline", h1Port: await listen(http.createServer(handler)), h2Port: await listen(http2.createServer(handler)) });
}

async function grpcBaseline() {
  const server = new grpc.Server();
  server.addService(
    {
      ping: {
        path: `/${PingService.typeName}/Ping`,
        requestStream: false,
        responseStream: false,
        requestSerialize: (message: PingRequest) => Buffer.from(toBinary(PingRequestSchema, message)),
        requestDeserialize: (bytes: Buffer) => fromBinary(PingRequestSchema, bytes),
        responseSerialize: (message: PingResponse) => Buffer.from(toBinary(PingResponseSchema, message)),
        responseDeserialize: (bytes: Buffer) => fromBinary(PingResponseSchema, bytes),
      },
    },
    {
      ping: (_call: grpc.ServerUnaryCall<PingRequest, PingResponse>, callback: grpc.sendUnaryData<PingResponse>) =>
        callback(null, create(PingResponseSchema, { response: "pong" })),
    },
  );
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync("127.0.0.1:0", grpc.ServerCredentials.createInsecure(), (error, p) => (error ? reject(error) : resolve(p))),
  );
  announce({ kind: "baseline", h2Port: port });
}

async function httpBaseline() {
  const history = Buffer.from(historyBody(), "utf8");
  const historyHeaders = {
    "docker-distribution-api-version": "registry/2.0",
    "cache-control": "no-store",
    "content-type": "application/json",
    "content-length": String(history.byteLength),
  };
  const image = process.argv[3] ? (JSON.parse(process.argv[3]) as SeededImage) : undefined;
  const manifest = image && Buffer.from(image.manifest.text, "utf8");
  const server = http.createServer((req, res) => {
    if (req.method === "GET" && req.url === "/ping/v2/ping") {
      const body = JSON.stringify({ response: "pong" });
      res.writeHead(200, { "content-type": "application/json", "content-length": Buffer.byteLength(body) });
      res.end(body);
    } else if (req.method === "GET" && req.url === HISTORY_PATH) {
      res.writeHead(200, historyHeaders);
      res.end(history);
    } else if (image && manifest && req.method === "GET" && req.url === MANIFEST_PATH) {
      res.writeHead(200, manifestHeaders(image.manifest));
      res.end(manifest);
    } else if (image && req.method === "GET" && req.url === blobPath(image.layer.digest)) {
      res.writeHead(200, blobHeaders(image.layer.digest, image.layer.size));
      pipeline(createReadStream(image.layer.file), res).catch(() => res.destroy());
    } else {
      res.writeHead(404).end();
    }
  });
  announce({ kind: "baseline", h1Port: await listen(server) });
}

const baselines: Record<string, () => Promise<void>> = { connect: connectBaseline, grpc: grpcBaseline, http: httpBaseline };
const start = baselines[process.argv[2] ?? ""];
if (!start) throw new Error(`usage: baselines.ts connect|grpc|http [<SeededImage JSON>] (got ${process.argv[2]})`);
await start();
