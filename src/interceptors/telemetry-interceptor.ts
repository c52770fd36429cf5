import type { DescMethod } from "@bufbuild/protobuf";
import { Code, ConnectError, type Interceptor } from "@connectrpc/connect";
import { codeName } from "../aip/errors.js";
import { principalKey, scopeKey } from "../auth/principal.js";
import type { Logger } from "../logger.js";
import { ANONYMOUS, type AuditLog } from "../telemetry/audit-log.js";
import { auditedMethod, type AuditedMethod } from "../telemetry/audited-methods.js";
import type { Metrics, RpcLabels } from "../telemetry/metrics.js";
import { REQUEST_ID_HEADER, requestIdFromHeader, requestIdKey } from "../telemetry/request-id.js";
import { endSpan, startServerSpan, traceIdOf, tracingActive, withContext } from "../telemetry/tracing.js";
import { protocolKey } from "./request-context.js";

interface MethodLabels {
  rpc: RpcLabels;
  inFlight: { grpc_service: string; grpc_method: string };
  /** By `<code> <protocol>`. */
  handled: Map<string, RpcLabels & { grpc_code: string; protocol: string }>;
  /** Undefined for a read: reads are not audited. */
  audited: AuditedMethod | undefined;
}

const GRPC_TYPES = { unary: "unary", server_streaming: "server_stream", client_streaming: "client_stream", bidi_streaming: "bidi_stream" } as const;

/**
 * Observes every call, outermost interceptor: one log line (procedure, protocol, code,
 * durationMs, caller, requestId, and traceId when tracing), the RPC metrics (started, handled
 * by code and protocol, latency, in flight) and, when tracing is on, a server span that is the
 * child of the caller's `traceparent` and is active while the call runs. The answer (or error)
 * carries the request id in `x-request-id`. For a streaming call the time is to its first answer.
 * With `audit`, every call of a changing method (`auditedMethod`), refused or not, is also one
 * line of the audit log; a read costs nothing more.
 */
export function telemetryInterceptor(logger: Logger, metrics: Metrics, audit?: AuditLog): Interceptor {
  // Label objects are made once per method (and code and protocol): prom-client's cost is then a lookup.
  const labelsOf = new Map<DescMethod, MethodLabels>();
  const rpcLabels = (method: DescMethod): MethodLabels => {
    let labels = labelsOf.get(method);
    if (!labels) {
      const rpc = { grpc_type: GRPC_TYPES[method.methodKind], grpc_service: method.parent.typeName, grpc_method: method.name };
      const audited = audit && auditedMethod(method);
      labels = { rpc, inFlight: { grpc_service: rpc.grpc_service, grpc_method: rpc.grpc_method }, handled: new Map(), audited };
      labelsOf.set(method, labels);
    }
    return labels;
  };
  const handledLabels = (labels: MethodLabels, code: string, protocol: string) => {
    const key = `${code} ${protocol}`;
    let handled = labels.handled.get(key);
    if (!handled) labels.handled.set(key, (handled = { ...labels.rpc, grpc_code: code, protocol }));
    return handled;
  };
  return (next) => async (req) => {
    const start = performance.now();
    const cached = rpcLabels(req.method as DescMethod);
    const labels = cached.rpc;
    const procedure = `/${labels.grpc_service}/${labels.grpc_method}`;
    let requestId = req.contextValues.get(requestIdKey);
    if (requestId === "") {
      requestId = requestIdFromHeader(req.header.get(REQUEST_ID_HEADER));
      req.contextValues.set(requestIdKey, requestId);
    }
    const protocol = req.contextValues.get(protocolKey);
    const traced = tracingActive()
      ? startServerSpan(procedure.slice(1), req.header, { "rpc.system": "grpc", "rpc.service": labels.grpc_service, "rpc.method": labels.grpc_method, "platform.protocol": protocol })
      : undefined;
    const inFlight = cached.inFlight;
    metrics.rpcStarted.inc(labels);
    metrics.rpcInFlight.inc(inFlight);
    let code: Code | 0 = 0;
    let message: string | undefined;
    let answer: unknown;
    try {
      const res = traced ? await withContext(traced.context, () => next(req)) : await next(req);
      res.header.set(REQUEST_ID_HEADER, requestId);
      if (cached.audited && !res.stream) answer = res.message;
      return res;
    } catch (error) {
      const e = error instanceof ConnectError ? error : undefined;
      code = e?.code ?? Code.Internal;
      message = e?.rawMessage;
      e?.metadata.set(REQUEST_ID_HEADER, requestId);
      throw error;
    } finally {
      const seconds = (performance.now() - start) / 1000;
      const name = code === 0 ? "OK" : codeName(code);
      metrics.rpcInFlight.dec(inFlight);
      metrics.rpcHandled.inc(handledLabels(cached, name, protocol));
      metrics.rpcSeconds.observe(labels, seconds);
      if (traced) endSpan(traced.span, code !== 0, { "rpc.grpc.status_code": code }, message);
      const caller = req.contextValues.get(principalKey)?.identityUid;
      logger.info("call", {
        procedure,
        protocol,
        code: name.toLowerCase(),
        durationMs: Math.round(seconds * 100_000) / 100,
        caller: caller ?? null,
        requestId,
        ...(traced ? { traceId: traceIdOf(traced.span) } : {}),
      });
      if (audit && cached.audited) {
        const resource = cached.audited.resourceOf(req.stream ? undefined : req.message, answer, req.contextValues.get(scopeKey));
        audit.write({ host: "api", action: cached.audited.action, resource, outcome: name, actor: { subject: caller || ANONYMOUS }, requestId, protocol });
      }
    }
  };
}
