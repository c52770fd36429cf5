import type { DescMethod, DescService, Message } from "@bufbuild/protobuf";
import { create } from "@bufbuild/protobuf";
import {
  Code,
  ConnectError,
  createServiceImplSpec,
  type ConnectRouter,
  type ContextValues,
  type HandlerContext,
  type Interceptor,
  type MethodImplSpec,
  type UnaryRequest,
  type UnaryResponse,
} from "@connectrpc/connect";
import { callLifeKey } from "../../interceptors/request-context.js";
import type { CallLife } from "./call-life.js";
import { asConnectError } from "./internal-error.js";

/** A service's implementation as a router was given it, with the interceptors it runs under. */
export interface RecordedService {
  service: DescService;
  methods: Record<string, MethodImplSpec>;
  /** The service's own interceptors, when given: they replace the router's, not add to them. */
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
   * The call's life, new for each call: its signal is the handler's `ctx.signal`. The caller ends
   * it when the client goes away; the call ends it at the client's deadline (DEADLINE_EXCEEDED)
   * and once it has answered (`finish`). It is in the call's context values (`callLifeKey`), where
   * the bookkeeping interceptor's deadline (`withDeadline`) adds the server's cap to it.
   */
  life: CallLife;
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
 * The handler context the core made, and the request it made with it, on that request: an
 * interceptor that hands on a copy copies this too, so the handler gets the context as it is only
 * when the request is the core's own, else the context merged with the copy.
 */
const MADE = Symbol("made by the core");
type CoreRequest = UnaryRequest & { [MADE]: { context: HandlerContext; request: UnaryRequest } };

/** A unary method's implementation and its interceptor chain. */
interface Implemented {
  spec: MethodImplSpec & { kind: "unary" };
  chain: (req: UnaryRequest) => Promise<UnaryResponse>;
}

/**
 * Calls a recorded implementation without a wire, with what the adapter's unary handlers give it
 * (`invokeUnaryImplementation`): a handler context (deadline, signal, headers, context values), the
 * same interceptors in the same order, the implementation. Each method's interceptor chain is built
 * once. Rejects with a ConnectError whose metadata holds the response headers (a non-ConnectError
 * becomes `internalError`).
 */
export function createUnaryCaller(services: RecordedService[], interceptors: Interceptor[], protocolName: string): UnaryCaller {
  const byMethod = new Map<string, Implemented>();
  for (const recorded of services) {
    for (const spec of Object.values(recorded.methods)) {
      if (spec.kind !== "unary") continue;
      byMethod.set(`${recorded.service.typeName}/${spec.method.name}`, { spec, chain: chainOf(spec, recorded.interceptors ?? interceptors) });
    }
  }
  // By descriptor too, found by name once: a key string made per call is hashed per call.
  const byDescriptor = new Map<DescMethod, Implemented>();
  const implementationOf = (method: DescMethod): Implemented | undefined => {
    let found = byDescriptor.get(method);
    if (found === undefined) {
      found = byMethod.get(`${method.parent.typeName}/${method.name}`);
      if (found !== undefined) byDescriptor.set(method, found);
    }
    return found;
  };
  return async (method, call) => {
    const found = implementationOf(method);
    if (!found) throw new ConnectError(`${method.parent.typeName}.${method.name} is not implemented`, Code.Unimplemented);
    const { life } = call;
    call.contextValues.set(callLifeKey, life);
    const context = new CoreHandlerContext(found.spec, protocolName, call);
    try {
      const { message, header, trailer } = await found.chain(new CoreUnaryRequest(found.spec, context, call));
      copyHeaders(header, context.responseHeader);
      copyHeaders(trailer, context.responseTrailer);
      return { message, header: context.responseHeader, trailer: context.responseTrailer };
    } catch (e) {
      life.end(e);
      const error = asConnectError(e);
      context.responseHeader.forEach((value, name) => {
        if (!error.metadata.has(name)) error.metadata.set(name, value);
      });
      throw error;
    } finally {
      // Releases the deadline's timer; the signal, if a handler made it, aborts with CANCELED.
      life.finish();
    }
  };
}

/** The interceptors around the implementation of `spec`, the first outermost. */
function chainOf(spec: MethodImplSpec & { kind: "unary" }, interceptors: Interceptor[]): (req: UnaryRequest) => Promise<UnaryResponse> {
  const method = spec.method;
  const implementation = async (req: UnaryRequest): Promise<UnaryResponse> => {
    const made = (req as CoreRequest)[MADE];
    const context = made.request === req ? made.context : { ...made.context, service: req.service, requestHeader: req.header, signal: req.signal, values: req.contextValues };
    const message = create(method.output, await spec.impl(req.message as never, context));
    return { stream: false, message, method, service: method.parent, header: context.responseHeader, trailer: context.responseTrailer };
  };
  let next = implementation as (req: UnaryRequest) => Promise<UnaryResponse>;
  for (let i = interceptors.length - 1; i >= 0; i--) next = interceptors[i](next as never) as unknown as typeof next;
  return next;
}

/**
 * The request the interceptors see: connect-es's fields, the signal made only when read. A class,
 * not an object literal: a literal with a getter costs a microsecond to make, a class's getter
 * nothing (it is on the prototype; a copy by spread has no `signal` of its own, and the
 * interceptors that copy a request set one).
 */
class CoreUnaryRequest implements CoreRequest {
  readonly stream = false as const;
  readonly requestMethod = "POST";
  readonly message: Message;
  readonly method: UnaryRequest["method"];
  readonly service: DescService;
  readonly url: string;
  readonly header: Headers;
  readonly contextValues: ContextValues;
  readonly [MADE]: { context: HandlerContext; request: UnaryRequest };
  readonly #life: CallLife;

  constructor(spec: MethodImplSpec & { kind: "unary" }, context: HandlerContext, call: UnaryCall) {
    this.message = call.input;
    this.method = spec.method as UnaryRequest["method"];
    this.service = spec.method.parent;
    this.url = call.url;
    this.header = call.header;
    this.contextValues = call.contextValues;
    this.#life = call.life;
    this[MADE] = { context, request: this as UnaryRequest };
  }

  get signal(): AbortSignal {
    return this.#life.signal;
  }
}

/**
 * The handler context connect-es's `createHandlerContext` makes (the same fields, deadline and
 * `timeoutMs()`), on the call's own life instead of two controllers linked to it by listeners:
 * the signal is made only when a handler reads it. The request headers are the call's. A class
 * for the reason `CoreUnaryRequest` is one.
 */
class CoreHandlerContext implements HandlerContext {
  readonly requestMethod = "POST";
  readonly method: DescMethod;
  readonly service: DescService;
  readonly requestHeader: Headers;
  readonly responseHeader = new Headers();
  readonly responseTrailer: Headers;
  readonly protocolName: string;
  readonly values: ContextValues;
  readonly url: string;
  readonly #life: CallLife;
  readonly #deadline: number | undefined;

  constructor(spec: MethodImplSpec & { kind: "unary" }, protocolName: string, call: UnaryCall) {
    this.method = spec.method;
    this.service = spec.method.parent;
    this.requestHeader = call.header;
    this.responseTrailer = call.trailer ?? new Headers();
    this.protocolName = protocolName;
    this.values = call.contextValues;
    this.url = call.url;
    this.#life = call.life;
    if (call.timeoutMs !== undefined) {
      this.#deadline = Date.now() + call.timeoutMs;
      call.life.deadlineIn(call.timeoutMs, () => new ConnectError("the operation timed out", Code.DeadlineExceeded));
    }
  }

  get signal(): AbortSignal {
    return this.#life.signal;
  }

  /** Bound: handlers may pass it on alone. */
  readonly timeoutMs = (): number | undefined => (this.#deadline === undefined ? undefined : this.#deadline - Date.now());
}

/** Replaces `to`'s entries by `from`'s (an answer's headers given to the wire), unless they are one object. */
function copyHeaders(from: Headers, to: Headers): void {
  if (from === to) return;
  to.forEach((_, key) => to.delete(key));
  from.forEach((value, key) => to.set(key, value));
}
