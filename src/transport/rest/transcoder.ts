/**
 * REST/JSON transcoder: serves the google.api.http rules of Connect services by calling the
 * very implementations the ConnectRouter serves, in memory, through the same interceptors
 * (`createUnaryCaller`), so every interceptor runs for REST calls exactly as for gRPC and
 * Connect calls. The request message is built from the path, query and body; the answer is
 * written to JSON once, from the message the implementation returned.
 *
 * Wiring (server.ts): record the implementations while the node adapter's router is given
 * them, then build the caller with the adapter's interceptors and reach the transcoder from
 * `fallback`:
 *
 *   const services: RecordedService[] = [];
 *   const nodeHandler = connectNodeAdapter({
 *     interceptors,
 *     contextValues,                              // per-request values for RPC calls
 *     routes: (router) => {
 *       const r = recordingRouter(router, services);
 *       r.service(GroupsService, groupsImpl);     // ... every service
 *     },
 *     fallback: (req, res) => {
 *       void rest(req, res).then((answered) => { if (!answered) otherRoutes(req, res); });
 *     },
 *   });
 *   const rest = createRestTranscoder({
 *     services: [GroupsService, PingService],     // the registered services with http rules
 *     call: createUnaryCaller(services, interceptors, "rest"),
 *     registry,                                   // every message type that may be an error detail or Any
 *     maxBodyBytes: 1 << 20,
 *     contextValues,                              // per-request values; the transcoder sets protocolKey = "rest"
 *   });
 *
 * `otherRoutes` answers what REST does not (OIDC discovery, health pages, ...) or 404.
 * CORS preflight (OPTIONS) must be answered before the transcoder, which would say 405.
 */

import { create, createRegistry } from "@bufbuild/protobuf";
import type { DescField, Message, Registry } from "@bufbuild/protobuf";
import { reflect } from "@bufbuild/protobuf/reflect";
import { FieldMaskSchema } from "@bufbuild/protobuf/wkt";
import type { FieldMask } from "@bufbuild/protobuf/wkt";
import { Code, ConnectError } from "@connectrpc/connect";
import { parseTimeout } from "@connectrpc/connect/protocol-connect";
import { MAX_TIMEOUT_MS, startExchange } from "../rpc/exchange.js";
import { internalError } from "../rpc/internal-error.js";
import type { UnaryPathOptions } from "../rpc/options.js";
import { file_google_rpc_error_details } from "../../../gen/google/rpc/error_details_pb.js";
import { FieldValueError, protoPath, setFieldFromString, valueAt } from "./field-path.js";
import { routesFromServices } from "./http-rules.js";
import type { RestRoute } from "./http-rules.js";
import { decodeCapture, MalformedEscapeError, type PathBindings } from "./path-template.js";
import { applyQueryParams } from "./query-params.js";
import { checkJsonContentType, inferredUpdateMask, messageFromBody, UnsupportedMediaTypeError } from "./request-body.js";
import { BodyRefusedError, readBody } from "../http/body-reader.js";
import { writeAnswer, writeCallError } from "./answer.js";
import { RouteTable } from "./route-table.js";
import type { NodeRequest, NodeResponse } from "../http/node-types.js";
import { httpStatusFromCode, invalidArgumentError, transcoderError, writeBodyRefused, writeStatus } from "../http/status-json.js";

export type { NodeRequest, NodeResponse } from "../http/node-types.js";

/**
 * `services`: those whose unary methods carry google.api.http rules, each on the router;
 * `maxBodyBytes`: a larger request body is answered 413 RESOURCE_EXHAUSTED, the handler not called.
 */
export interface RestTranscoderOptions extends UnaryPathOptions {
  /** Resolves error details and Any fields when writing JSON (`@type`). */
  registry: Registry;
  /** ErrorInfo.domain of the errors the transcoder raises itself. */
  errorDomain: string;
  /** Told about unexpected failures (answered 500 INTERNAL), e.g. to log them. */
  onError?: (error: unknown, req: NodeRequest) => void;
}

/**
 * Answers a REST request and resolves true, or resolves false without writing anything
 * when no HTTP rule matches the path. Never rejects.
 */
export type RestHandler = (req: NodeRequest, res: NodeResponse) => Promise<boolean>;

/**
 * Compiles the HTTP rules of `services` once and returns the REST handler.
 * Throws at start-up for an invalid rule or a service method missing from `handlers`.
 *
 * Answers:
 * - success: 200 with the output message as JSON (lowerCamel names, int64 as strings, zero
 *   values written, timestamps with milliseconds: see aip/message-json.ts), or only the
 *   `response_body` field; a google.protobuf.Empty output is 200 with an empty body.
 * - errors: a google.rpc.Status JSON body, HTTP status from the standard gRPC mapping; a 401
 *   carries `WWW-Authenticate: Bearer` (RFC 6750, `bearerChallenge`).
 * - a path matching a template only for other HTTP methods: 405 with an `Allow` header and
 *   Status code 12 (UNIMPLEMENTED, reason METHOD_NOT_ALLOWED). Chosen over 404/NOT_FOUND
 *   because the resource exists and only the method is wrong (grpc-gateway does the same).
 */
export function createRestTranscoder(opts: RestTranscoderOptions): RestHandler {
  const registry = createRegistry(file_google_rpc_error_details, opts.registry);
  const target = { registry, domain: opts.errorDomain };
  const routes = routesFromServices(opts.services);
  const table = new RouteTable(routes);

  return async function restHandler(req, res) {
    const url = req.url ?? "/";
    const q = url.indexOf("?");
    const path = q < 0 ? url : url.slice(0, q);
    const found = table.lookup(req.method ?? "", path);
    if (found.kind === "noMatch") return false;
    try {
      if (found.kind === "methodNotAllowed") {
        const error = transcoderError(Code.Unimplemented, "METHOD_NOT_ALLOWED", `Method ${req.method} is not allowed on ${path}`);
        writeStatus(res, 405, error, target, { allow: found.allowed.join(", ") });
        return true;
      }
      const { route, bindings } = found;
      const exchange = startExchange(opts, req, res, "rest", "the client closed the connection");
      let input: Message;
      try {
        input = await buildRequest(route, bindings, req, url.slice(path.length + 1), opts.maxBodyBytes);
      } catch (e) {
        if (e instanceof BodyRefusedError) {
          writeBodyRefused(req, res, e, target);
          return true;
        }
        if (e instanceof UnsupportedMediaTypeError) {
          writeStatus(res, 415, e.status, target);
          return true;
        }
        if (!(e instanceof ConnectError)) throw e;
        writeStatus(res, httpStatusFromCode(e.code), e, target);
        return true;
      }
      const given = req.headers["connect-timeout-ms"];
      const timeout = parseTimeout(typeof given === "string" ? given : null, MAX_TIMEOUT_MS);
      const outcome = await exchange.run({
        method: route.method,
        input: () => {
          if (timeout.error) throw transcoderError(Code.InvalidArgument, "INVALID_ARGUMENT", timeout.error.rawMessage);
          return input;
        },
        timeoutMs: timeout.timeoutMs,
        url: `http://in-process/${route.method.parent.typeName}/${route.method.name}`,
      });
      if (outcome === undefined) return true;
      if (outcome.error) writeCallError(req, res, outcome.answered, target);
      else writeAnswer(res, route, outcome.answer, target);
    } catch (e) {
      opts.onError?.(e, req);
      if (!res.headersSent) writeStatus(res, 500, internalError(e), target);
      else res.end();
    }
    return true;
  };
}

/** A path variable's value, percent-decoded; malformed escapes are the field's INVALID_ARGUMENT. */
function decodePathValue(raw: string, chain: readonly DescField[]): string {
  try {
    return decodeCapture(raw);
  } catch (e) {
    if (e instanceof MalformedEscapeError) throw new FieldValueError(protoPath(chain), `${e.message}: write % as %25, and every other escape as % and two hex digits of UTF-8`);
    throw e;
  }
}

async function buildRequest(route: RestRoute, bindings: PathBindings, req: NodeRequest, query: string, maxBodyBytes: number): Promise<Message> {
  const desc = route.method.input;
  let message: Message = create(desc);
  let bodyKeys: string[] = [];
  if (route.body !== "") {
    const bytes = await readBody(req, maxBodyBytes);
    checkJsonContentType(req.headers, bytes);
    const parsed = messageFromBody(route, bytes);
    message = parsed.message;
    bodyKeys = parsed.keys;
  }
  const boundPaths = new Set<string>();
  for (const [key, raw] of bindings) {
    const chain = route.pathFields.get(key)!;
    try {
      const value = decodePathValue(raw, chain);
      const fromBody = valueAt(message, desc, chain);
      setFieldFromString(message, desc, chain, value, key);
      if (fromBody !== undefined && fromBody !== valueAt(message, desc, chain)) {
        throw new FieldValueError(protoPath(chain), `the body says "${String(fromBody)}" but the URL says "${value}"`);
      }
    } catch (e) {
      if (e instanceof FieldValueError) throw invalidArgumentError([{ field: e.field, description: e.description }]);
      throw e;
    }
    boundPaths.add(chain.map((f) => f.name).join("."));
  }
  applyQueryParams(desc, message, new URLSearchParams(query), { path: boundPaths, body: route.body });
  const inferred = inferredUpdateMask(route, bodyKeys);
  if (inferred) {
    // A mask given in the query wins; an empty one (`updateMask=`) counts as not given.
    const r = reflect(desc, message);
    const given = r.isSet(inferred.field) ? (r.get(inferred.field).message as FieldMask).paths : [];
    if (given.length === 0) r.set(inferred.field, reflect(FieldMaskSchema, inferred.mask));
  }
  return message;
}
