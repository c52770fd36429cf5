import type { DescMethod, DescService, Message } from "@bufbuild/protobuf";
import {
  Code,
  ConnectError,
  createHandlerContext,
  createServiceImplSpec,
  type ConnectRouter,
  type ContextValues,
  type Interceptor,
  type MethodImplSpec,
} from "@connectrpc/connect";
import { invokeUnaryImplementation } from "@connectrpc/connect/protocol";

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
  /** Aborts the call (the client went away). */
  signal: AbortSignal;
  contextValues: ContextValues;
  /** The caller's own deadline, if it asked for one. */
  timeoutMs?: number;
  /** For `ctx.url`. */
  url: string;
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
 * (a non-ConnectError becomes INTERNAL "internal error", as connect-es makes it).
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
    const context = createHandlerContext({
      ...found.spec,
      service: method.parent,
      requestMethod: "POST",
      protocolName,
      timeoutMs: call.timeoutMs,
      requestSignal: call.signal,
      requestHeader: call.header,
      url: call.url,
      contextValues: call.contextValues,
    });
    try {
      const message = await invokeUnaryImplementation(found.spec, context, call.input, found.interceptors);
      return { message, header: context.responseHeader, trailer: context.responseTrailer };
    } catch (e) {
      context.abort(e);
      const error = e instanceof ConnectError ? e : new ConnectError("internal error", Code.Internal, undefined, undefined, e);
      context.responseHeader.forEach((value, name) => {
        if (!error.metadata.has(name)) error.metadata.set(name, value);
      });
      throw error;
    } finally {
      // Releases the deadline's timer and the signal's listeners; a shared reason spares a DOMException per call.
      context.abort(CALL_ENDED);
    }
  };
}
