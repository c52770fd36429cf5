import type { DescMethod, DescService, Message } from "@bufbuild/protobuf";
import {
  Code,
  ConnectError,
  createServiceImplSpec,
  type ConnectRouter,
  type ContextValues,
  type HandlerContext,
  type Interceptor,
  type MethodImplSpec,
} from "@connectrpc/connect";
import { invokeUnaryImplementation } from "@connectrpc/connect/protocol";
import { asConnectError } from "./internal-error.js";

/** The reason a finished call's signal carries. */
const CALL_ENDED = new ConnectError("the call has ended", Code.Canceled);

/** A service's implementation as a router was given it, with the interceptors it runs under. */
export interface RecordedService {
  service: DescService;
  methods: Record<string, MethodImplSpec>;
  /** The service's own interceptors (they replace the router's, as connect-es does), when given. */
  interceptors?: Interceptor[];
}

/**
 * A router that registers every service on `router` and records its implementation in `into`,
 * so the same implementations can be called in memory (`createUnaryCaller`).
 */
export function recordingRouter(router: ConnectRouter, into: RecordedService[]): ConnectRouter {
  const recorder: ConnectRouter = {
    get handlers() {
      return router.handlers;
    },
    service(service, implementation, options) {
      into.push({ ...createServiceImplSpec(service, implementation), interceptors: options?.interceptors });
      router.service(service, implementation, options);
      return recorder;
    },
    rpc(method, implementation, options) {
      router.rpc(method, implementation, options);
      return recorder;
    },
  };
  return recorder;
}

/** One in-memory call: what the wire would have carried, already decoded. */
export interface UnaryCall {
  input: Message;
  /** The request headers the handler sees (`ctx.requestHeader`). */
  header: Headers;
  /**
   * The call's own controller, new for each call: its signal is the handler's `ctx.signal`. The
   * caller aborts it when the client goes away; the call aborts it at the client's deadline
   * (DEADLINE_EXCEEDED) and when it ends (a reason of code CANCELED). No listener links it to
   * anything else, so a call costs one AbortController.
   */
  controller: AbortController;
  contextValues: ContextValues;
  /** The caller's own deadline, if it asked for one. */
  timeoutMs?: number;
  /** For `ctx.url`. */
  url: string;
  /**
   * The handler's response trailers (`ctx.responseTrailer`) are set on this object when given, so
   * the caller has them after a failed call too (a failure's error carries only the headers).
   */
  trailer?: Headers;
}

/** What a call answered: its message, its response headers and trailers. */
export interface UnaryAnswer {
  message: Message;
  header: Headers;
  trailer: Headers;
}

/** Calls unary `method` (anything else is UNIMPLEMENTED). */
export type UnaryCaller = (method: DescMethod, call: UnaryCall) => Promise<UnaryAnswer>;

/**
 * Calls a recorded implementation as connect-es's unary handlers do, without a wire: a handler
 * context (deadline, signal, headers, context values), the same interceptors in the same order,
 * the implementation. Rejects with a ConnectError whose metadata holds the response headers
 * (a non-ConnectError becomes `internalError`, as connect-es makes it).
 */
export function createUnaryCaller(services: RecordedService[], interceptors: Interceptor[], protocolName: string): UnaryCaller {
  const byMethod = new Map<string, { spec: MethodImplSpec; interceptors: Interceptor[] }>();
  for (const recorded of services) {
    for (const spec of Object.values(recorded.methods)) {
      byMethod.set(`${recorded.service.typeName}/${spec.method.name}`, { spec, interceptors: recorded.interceptors ?? interceptors });
    }
  }
  return async (method, call) => {
    const found = byMethod.get(`${method.parent.typeName}/${method.name}`);
    if (!found || found.spec.kind !== "unary") throw new ConnectError(`${method.parent.typeName}.${method.name} is not implemented`, Code.Unimplemented);
    const context = handlerContext(found.spec, protocolName, call);
    try {
      const message = await invokeUnaryImplementation(found.spec, context, call.input, found.interceptors);
      return { message, header: context.responseHeader, trailer: context.responseTrailer };
    } catch (e) {
      context.abort(e);
      const error = asConnectError(e);
      context.responseHeader.forEach((value, name) => {
        if (!error.metadata.has(name)) error.metadata.set(name, value);
      });
      throw error;
    } finally {
      // Releases the deadline's timer; a shared reason spares a DOMException per call.
      context.abort(CALL_ENDED);
    }
  };
}

/**
 * The handler context connect-es's `createHandlerContext` makes (the same fields, deadline and
 * `timeoutMs()`), on the call's own controller instead of two more controllers linked to it by
 * listeners. The request headers are the call's (each call brings its own).
 */
function handlerContext(spec: MethodImplSpec, protocolName: string, call: UnaryCall): HandlerContext & { abort(reason: unknown): void } {
  const { controller } = call;
  let timeoutMs: () => number | undefined = () => undefined;
  let timer: NodeJS.Timeout | undefined;
  if (call.timeoutMs !== undefined) {
    const deadline = Date.now() + call.timeoutMs;
    timeoutMs = () => deadline - Date.now();
    const expire = () => controller.abort(new ConnectError("the operation timed out", Code.DeadlineExceeded));
    if (call.timeoutMs <= 0) expire();
    else timer = setTimeout(expire, call.timeoutMs);
  }
  return {
    method: spec.method,
    service: spec.method.parent,
    signal: controller.signal,
    timeoutMs,
    requestMethod: "POST",
    requestHeader: call.header,
    responseHeader: new Headers(),
    responseTrailer: call.trailer ?? new Headers(),
    protocolName,
    values: call.contextValues,
    url: call.url,
    abort(reason) {
      clearTimeout(timer);
      controller.abort(reason);
    },
  };
}
