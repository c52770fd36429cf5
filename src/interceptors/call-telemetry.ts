import type { DescMethod } from "@bufbuild/protobuf";
import { Code, type ConnectError, type StreamRequest, type StreamResponse, type UnaryRequest, type UnaryResponse } from "@connectrpc/connect";
import { codeName } from "../aip/errors.js";
import { principalKey, scopeKey } from "../access/principal.js";
import type { Logger } from "../logger.js";
import { ANONYMOUS, type AuditLog } from "../telemetry/audit-log.js";
import { auditedMethod, type AuditedMethod } from "../telemetry/audited-methods.js";
import type { Metrics, RpcLabels } from "../telemetry/metrics.js";
import type { HistogramSlot, Slot } from "../telemetry/slot-metrics.js";
import { REQUEST_ID_HEADER, requestIdFromHeader, requestIdKey } from "../telemetry/request-id.js";
import { endSpan, startServerSpan, traceIdOf, tracingActive } from "../telemetry/tracing.js";
import { connectionKey, protocolKey } from "./request-context.js";

/** A method's metric slots, and what else is made once per method. */
interface MethodLabels {
  rpc: RpcLabels;
  started: Slot;
  inFlight: Slot;
  seconds: HistogramSlot;
  /** By protocol, then code name. */
  handled: Map<string, Map<string, Slot>>;
  /** Undefined for a read: reads are not audited. */
  audited: AuditedMethod | undefined;
  /** `/<service>/<method>`. */
  procedure: string;
}

const GRPC_TYPES = { unary: "unary", server_streaming: "server_stream", client_streaming: "client_stream", bidi_streaming: "bidi_stream" } as const;

/** One call being observed: what `start` learned, and how it ended. */
export interface ObservedCall {
  readonly req: UnaryRequest | StreamRequest;
  readonly start: number;
  readonly labels: MethodLabels;
  readonly requestId: string;
  readonly protocol: string;
  /** The call's server span, when tracing: run the call in `traced.context`. */
  readonly traced: ReturnType<typeof startServerSpan> | undefined;
  code: Code | 0;
  message: string | undefined;
  /** The answer of an audited unary call. */
  answer: unknown;
}

export interface CallTelemetry {
  /** Starts observing a call: its request id (made here when the caller sent none), started and in-flight metrics, its span. */
  start(req: UnaryRequest | StreamRequest): ObservedCall;
  /** The call answered: the answer carries the request id in `x-request-id`. */
  answered(call: ObservedCall, res: UnaryResponse | StreamResponse): void;
  /** The call failed with `error` (already an API error): the error carries the request id. */
  failed(call: ObservedCall, error: ConnectError): void;
  /** The call's end, answered or failed: handled and latency metrics, span end, the log line, the audit line. */
  end(call: ObservedCall): void;
}

/**
 * Observes every call: one log line (procedure, protocol, code, durationMs, caller, requestId,
 * and traceId when tracing), the RPC metrics (started, handled by code and protocol, latency, in
 * flight) and, when tracing is on, a server span that is the child of the caller's `traceparent`
 * (the caller runs the call in its context). The answer (or error) carries the request id in
 * `x-request-id`. For a streaming call the time is to its first answer. With `audit`, every call
 * of a changing method (`auditedMethod`), refused or not, is also one line of the audit log; a
 * read costs nothing more.
 */
export function callTelemetry(logger: Logger, metrics: Metrics, audit?: AuditLog): CallTelemetry {
  // Slots are found once per method (and code and protocol): a call's metrics are then number changes.
  const labelsOf = new Map<DescMethod, MethodLabels>();
  const rpcLabels = (method: DescMethod): MethodLabels => {
    let labels = labelsOf.get(method);
    if (!labels) {
      const rpc = { grpc_type: GRPC_TYPES[method.methodKind], grpc_service: method.parent.typeName, grpc_method: method.name };
      labels = {
        rpc,
        started: metrics.rpcStarted.slot(rpc),
        inFlight: metrics.rpcInFlight.slot({ grpc_service: rpc.grpc_service, grpc_method: rpc.grpc_method }),
        seconds: metrics.rpcSeconds.slot(rpc),
        handled: new Map(),
        audited: audit && auditedMethod(method),
        procedure: `/${rpc.grpc_service}/${rpc.grpc_method}`,
      };
      labelsOf.set(method, labels);
    }
    return labels;
  };
  const handledSlot = (labels: MethodLabels, code: string, protocol: string): Slot => {
    let byCode = labels.handled.get(protocol);
    if (!byCode) labels.handled.set(protocol, (byCode = new Map()));
    let slot = byCode.get(code);
    if (!slot) byCode.set(code, (slot = metrics.rpcHandled.slot({ ...labels.rpc, grpc_code: code, protocol })));
    return slot;
  };
  return {
    start(req) {
      const start = performance.now();
      const labels = rpcLabels(req.method as DescMethod);
      let requestId = req.contextValues.get(requestIdKey);
      if (requestId === "") {
        requestId = requestIdFromHeader(req.header.get(REQUEST_ID_HEADER));
        req.contextValues.set(requestIdKey, requestId);
      }
      const protocol = req.contextValues.get(protocolKey);
      const { rpc } = labels;
      const traced = tracingActive()
        ? startServerSpan(labels.procedure.slice(1), req.header, { "rpc.system": "grpc", "rpc.service": rpc.grpc_service, "rpc.method": rpc.grpc_method, "platform.protocol": protocol })
        : undefined;
      labels.started.value++;
      labels.inFlight.value++;
      return { req, start, labels, requestId, protocol, traced, code: 0, message: undefined, answer: undefined };
    },
    answered(call, res) {
      res.header.set(REQUEST_ID_HEADER, call.requestId);
      if (call.labels.audited && !res.stream) call.answer = res.message;
    },
    failed(call, error) {
      call.code = error.code;
      call.message = error.rawMessage;
      error.metadata.set(REQUEST_ID_HEADER, call.requestId);
    },
    end(call) {
      const { req, labels, code, protocol, requestId, traced } = call;
      const seconds = (performance.now() - call.start) / 1000;
      const name = code === 0 ? "OK" : codeName(code);
      labels.inFlight.value--;
      handledSlot(labels, name, protocol).value++;
      labels.seconds.observe(seconds);
      if (traced) endSpan(traced.span, code !== 0, { "rpc.grpc.status_code": code }, call.message);
      const caller = req.contextValues.get(principalKey)?.identityUid;
      logger.info("call", {
        procedure: labels.procedure,
        protocol,
        code: name.toLowerCase(),
        durationMs: Math.round(seconds * 100_000) / 100,
        caller: caller ?? null,
        requestId,
        ...(traced ? { traceId: traceIdOf(traced.span) } : {}),
      });
      if (audit && labels.audited) {
        const resource = labels.audited.resourceOf(req.stream ? undefined : req.message, call.answer, req.contextValues.get(scopeKey));
        if (caller) audit.write({ host: "api", action: labels.audited.action, resource, outcome: name, actor: { subject: caller }, requestId, protocol });
        else {
          const clientAddress = req.contextValues.get(connectionKey)?.remoteAddress ?? "";
          audit.write({ host: "api", action: labels.audited.action, resource, outcome: name, actor: { subject: ANONYMOUS }, requestId, protocol, clientAddress });
        }
      }
    },
  };
}
