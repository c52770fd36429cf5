import assert from "node:assert/strict";
import { createRegistry, fromBinary, fromJson, toBinary, toJson, type DescMethod, type DescService, type JsonObject, type JsonValue } from "@bufbuild/protobuf";
import { ConnectError, createClient, type Transport } from "@connectrpc/connect";
import { createConnectTransport, createGrpcWebTransport } from "@connectrpc/connect-node";
import * as grpc from "@grpc/grpc-js";
import { file_google_rpc_error_details } from "../../gen/google/rpc/error_details_pb.js";
import { StatusSchema } from "../../gen/google/rpc/status_pb.js";
import { isV1 } from "../../src/aip/v1/version.js";
import { messageJson } from "../../src/aip/message-json.js";

/** What a call returned, the same shape whatever the protocol. */
export interface Outcome {
  /** gRPC status code; 0 on success. */
  code: number;
  /** The response as proto JSON on success. */
  body?: JsonObject;
  message?: string;
  /** Error details as google.rpc.Status JSON (`@type` plus fields). */
  details: JsonObject[];
  /** HTTP status (REST only). */
  httpStatus?: number;
}

/** A REST request for a case: method, path (with query) and JSON body. */
export interface RestRequest {
  method: string;
  path: string;
  body?: JsonValue;
}

export type WireName = "grpc" | "connect" | "grpc-web" | "rest";

/** The four wires, in the order `allWires` opens them. */
export const WIRE_NAMES: readonly WireName[] = ["grpc", "connect", "grpc-web", "rest"];

export interface Wire {
  name: WireName;
  call(method: DescMethod, request: JsonObject, rest: RestRequest, token?: string): Promise<Outcome>;
  close(): void;
}

export const detailRegistry = createRegistry(file_google_rpc_error_details);

/**
 * Every RPC a wire makes carries this deadline, as standard clients, Envoy routes and grpc-go
 * contexts do (`grpc-timeout`, `connect-timeout-ms`): a server that refused deadlines would fail
 * every test.
 */
export const CALL_DEADLINE_MS = 60_000;

export function methodOf(service: DescService, name: string): DescMethod {
  const method = service.methods.find((m) => m.name === name);
  if (!method) throw new Error(`no method ${name} on ${service.typeName}`);
  return method;
}

function detailsJson(details: Array<{ type: string; value: Uint8Array }>): JsonObject[] {
  return details.map((d) => {
    const desc = detailRegistry.getMessage(d.type);
    if (!desc) return { "@type": `type.googleapis.com/${d.type}` };
    return { "@type": `type.googleapis.com/${d.type}`, ...(toJson(desc, fromBinary(desc, d.value), { registry: detailRegistry }) as JsonObject) };
  });
}

/** A @grpc/grpc-js client over h2c, (de)serializing with our generated descriptors. */
export function grpcWire(port: number): Wire {
  const client = new grpc.Client(`127.0.0.1:${port}`, grpc.credentials.createInsecure());
  return {
    name: "grpc",
    call(method, request, _rest, token) {
      const metadata = new grpc.Metadata();
      if (token) metadata.set("authorization", `Bearer ${token}`);
      return new Promise((resolve) => {
        client.makeUnaryRequest(
          `/${method.parent.typeName}/${method.name}`,
          (json: JsonObject) => Buffer.from(toBinary(method.input, fromJson(method.input, json))),
          (bytes: Buffer) => toJson(method.output, fromBinary(method.output, bytes)) as JsonObject,
          request,
          metadata,
          { deadline: Date.now() + CALL_DEADLINE_MS },
          (error, body) => {
            if (!error) return resolve({ code: 0, body, details: [] });
            const raw = error.metadata?.get("grpc-status-details-bin")[0];
            const status = raw ? fromBinary(StatusSchema, raw as Buffer) : undefined;
            const details = (status?.details ?? []).map((any) => ({ type: any.typeUrl.split("/").pop() ?? "", value: any.value }));
            resolve({ code: error.code, message: error.details, details: detailsJson(details) });
          },
        );
      });
    },
    close: () => client.close(),
  };
}

function connectLike(name: "connect" | "grpc-web", transport: Transport): Wire {
  return {
    name,
    async call(method, request, _rest, token) {
      const client = createClient(method.parent, transport) as unknown as Record<string, (req: unknown, opts: unknown) => Promise<unknown>>;
      try {
        const response = await client[method.localName](fromJson(method.input, request), {
          headers: token ? { authorization: `Bearer ${token}` } : {},
          timeoutMs: CALL_DEADLINE_MS,
        });
        return { code: 0, body: toJson(method.output, response as never) as JsonObject, details: [] };
      } catch (error) {
        const e = ConnectError.from(error);
        const details = e.details.map((d) => ("desc" in d ? { type: d.desc.typeName, value: toBinary(d.desc, d.value as never) } : d));
        return { code: e.code, message: e.rawMessage, details: detailsJson(details) };
      }
    },
    close: () => {},
  };
}

/** The Connect protocol, JSON over HTTP/1.1. */
export function connectWire(port: number): Wire {
  return connectLike("connect", createConnectTransport({ baseUrl: `http://127.0.0.1:${port}`, httpVersion: "1.1" }));
}

/** The Connect protocol, JSON over HTTP/2 (prior knowledge). */
export function connectH2Wire(port: number): Wire {
  return connectLike("connect", createConnectTransport({ baseUrl: `http://127.0.0.1:${port}`, httpVersion: "2" }));
}

/** gRPC-Web, binary over HTTP/1.1. */
export function grpcWebWire(port: number): Wire {
  return connectLike("grpc-web", createGrpcWebTransport({ baseUrl: `http://127.0.0.1:${port}`, httpVersion: "1.1", useBinaryFormat: true }));
}

/** Plain HTTP/1.1 JSON through the REST transcoder. */
export function restWire(port: number): Wire {
  return {
    name: "rest",
    async call(method, _request, rest, token) {
      const headers: Record<string, string> = {};
      if (token) headers.authorization = `Bearer ${token}`;
      if (rest.body !== undefined) headers["content-type"] = "application/json";
      const res = await fetch(`http://127.0.0.1:${port}${rest.path}`, {
        method: rest.method,
        headers,
        body: rest.body === undefined ? undefined : JSON.stringify(rest.body),
      });
      const text = await res.text();
      const json = text === "" ? {} : (JSON.parse(text) as JsonObject);
      if (res.ok) return { code: 0, body: canonicalRestBody(method, json), details: [], httpStatus: res.status };
      return {
        code: json.code as number,
        message: json.message as string,
        details: (json.details as JsonObject[] | undefined) ?? [],
        httpStatus: res.status,
      };
    },
    close: () => {},
  };
}

/**
 * A successful REST body, checked against the REST conventions (every implicit field written,
 * timestamps with milliseconds: src/aip/message-json.ts), then in canonical proto JSON so that
 * outcomes compare equal across wires.
 */
function canonicalRestBody(method: DescMethod, json: JsonObject): JsonObject {
  if (method.output.typeName === "google.protobuf.Empty") return json;
  const message = fromJson(method.output, json, { registry: detailRegistry });
  const protoFieldNames = isV1(method.parent);
  assert.deepEqual(json, messageJson(method.output, message, { registry: detailRegistry, protoFieldNames }), `REST conventions of ${method.output.typeName}`);
  return toJson(method.output, message, { registry: detailRegistry }) as JsonObject;
}

export function allWires(port: number): Wire[] {
  return [grpcWire(port), connectWire(port), grpcWebWire(port), restWire(port)];
}

/** The ErrorInfo reason of an outcome, if any. */
export function reasonOf(outcome: Outcome): string | undefined {
  return outcome.details.find((d) => String(d["@type"]).endsWith("google.rpc.ErrorInfo"))?.reason as string | undefined;
}

export function detailOf(outcome: Outcome, type: string): JsonObject | undefined {
  return outcome.details.find((d) => String(d["@type"]).endsWith(`google.rpc.${type}`));
}

/** The fields an outcome's google.rpc.BadRequest names, in its order ([] without one). */
export function violatedFields(outcome: Pick<Outcome, "details">): unknown[] {
  return ((detailOf(outcome as Outcome, "BadRequest")?.fieldViolations as JsonObject[] | undefined) ?? []).map((v) => v.field);
}

/** `params` as a URL query; an array value repeats its key (`?a=1&a=2`). */
export function queryString(params: Record<string, string | number | string[]>): string {
  const search = new URLSearchParams();
  for (const [key, value] of Object.entries(params)) for (const v of Array.isArray(value) ? value : [value]) search.append(key, String(v));
  return search.toString();
}


/**
 * The same call on every wire of `wires`, at once: the outcomes must agree (code and body); returns
 * the first.
 */
export async function onEveryWire(wires: Wire[], call: (wire: Wire) => Promise<Outcome>): Promise<Outcome> {
  const outcomes = await Promise.all(wires.map(call));
  for (let i = 1; i < outcomes.length; i++) {
    assert.equal(outcomes[i].code, outcomes[0].code, `${wires[i].name}: ${outcomes[i].message ?? ""} ${JSON.stringify(outcomes[i].details)}`);
    assert.deepEqual(outcomes[i].body, outcomes[0].body, wires[i].name);
  }
  return outcomes[0];
}
