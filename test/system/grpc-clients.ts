import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import * as grpc from "@grpc/grpc-js";
import * as protoLoader from "@grpc/proto-loader";
import { inRepo } from "../support/repo.js";

const protoDeps = inRepo("proto-deps");

/** Creates proto-deps/ (git-ignored) with scripts/vendor-protos.mjs unless it is already there. */
function ensureProtoDeps(): void {
  if (existsSync(`${protoDeps}/grpc/health/v1/health.proto`)) return;
  const run = spawnSync(process.execPath, [inRepo("scripts/vendor-protos.mjs")], { stdio: "inherit" });
  if (run.status !== 0) throw new Error("scripts/vendor-protos.mjs failed");
}

/** A grpc-js client of `service` (e.g. "grpc.health.v1.Health") (from proto-deps/`file`) on 127.0.0.1:`port`. */
export function grpcClient(file: string, service: string, port: number): grpc.Client {
  ensureProtoDeps();
  const definition = protoLoader.loadSync(file, {
    includeDirs: [protoDeps],
    keepCase: true,
    enums: String,
    defaults: true,
    oneofs: true,
  });
  let ctor: unknown = grpc.loadPackageDefinition(definition);
  for (const part of service.split(".")) ctor = (ctor as Record<string, unknown>)[part];
  const Client = ctor as grpc.ServiceClientConstructor;
  return new Client(`127.0.0.1:${port}`, grpc.credentials.createInsecure());
}

/** Sends `requests` on one bidi stream, half-closes, and resolves with every response. */
export function bidi<Res>(client: grpc.Client, method: string, requests: object[]): Promise<Res[]> {
  const call = (client as unknown as Record<string, () => grpc.ClientDuplexStream<object, Res>>)[method]!.call(client);
  const responses: Res[] = [];
  return new Promise((resolve, reject) => {
    call.on("data", (res: Res) => responses.push(res));
    call.on("error", reject);
    call.on("end", () => resolve(responses));
    for (const req of requests) call.write(req);
    call.end();
  });
}

/** Calls a unary method and resolves with its response. */
export function unary<Res>(client: grpc.Client, method: string, request: object): Promise<Res> {
  const fn = (client as unknown as Record<string, (...args: unknown[]) => unknown>)[method]!;
  return new Promise((resolve, reject) => {
    fn.call(client, request, (err: grpc.ServiceError | null, res: Res) => (err ? reject(err) : resolve(res)));
  });
}
