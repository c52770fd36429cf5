import type { DescMethod, Message } from "@bufbuild/protobuf";
import { Code, ConnectError, createContextValues } from "@connectrpc/connect";
import { protocolKey } from "../../interceptors/request-context.js";
import { BodyRefusedError } from "../http/body-reader.js";
import type { NodeRequest, NodeResponse } from "../http/node-types.js";
import type { UnaryAnswer } from "./call.js";
import { requestHeaders, type Wire } from "./headers.js";
import { CallLife } from "./call-life.js";
import { asConnectError } from "./internal-error.js";
import type { UnaryPathOptions } from "./options.js";

/** The longest deadline a caller may send: no bound, as on the adapter. */
export const MAX_TIMEOUT_MS = Number.MAX_SAFE_INTEGER;

/** What a protocol tells the core about one call. */
export interface CallSteps<T> {
  method: DescMethod;
  /** The request message, read (`readBody`) and decoded: throws a ConnectError (a malformed deadline's too), or the reader's refusal "aborted". */
  input: () => Message | Promise<Message>;
  /** The caller's deadline, ms counted from the request's arrival. */
  timeoutMs: number | undefined;
  /** The handler's `ctx.url`. */
  url: string;
  /** Where the handler's response trailers are set, for a protocol that answers them after a failure too. */
  trailer?: Headers;
  /** The answer's body in the protocol's encoding; a throw fails the call as the handler's would. */
  encode?: (answer: UnaryAnswer) => T;
}

/** A call's outcome: its answer and encoded body, or its error (`answered`: after `callError`) and the answer, if one came before the failure. */
export type CallOutcome<T> =
  | { error?: undefined; answer: UnaryAnswer; encoded: T }
  | { error: ConnectError; answered: ConnectError; answer?: UnaryAnswer };

/** One unary call on an HTTP request, started as the request arrives. */
export interface UnaryExchange {
  /**
   * Reads the input and calls the implementation through the interceptors (`options.call`) with
   * the request headers `wire` hands a handler, the context values with `protocolKey` set, the
   * deadline left, and a life (`CallLife`) ended with CANCELED when the client goes away before the
   * answer was written. Resolves the outcome, or undefined when the client has gone (the response is
   * destroyed: nothing is to be written). Never rejects.
   */
  run<T = undefined>(steps: CallSteps<T>): Promise<CallOutcome<T> | undefined>;
}

/** Starts a call on `req` as it arrives: its deadline counts from now, its life ends when `res` closes unanswered (`closed`: the CANCELED message). */
export function startExchange(options: UnaryPathOptions, req: NodeRequest, res: NodeResponse, wire: Wire, closed: string): UnaryExchange {
  const arrived = Date.now();
  const life = new CallLife();
  // Not `writableFinished`: Node's HTTP/2 compat response reports it true once a reset closed the stream.
  res.once("close", () => {
    if (!res.writableEnded) life.end(new ConnectError(closed, Code.Canceled));
  });
  const gone = () => {
    res.destroy();
    return undefined;
  };
  return {
    async run<T>(steps: CallSteps<T>): Promise<CallOutcome<T> | undefined> {
      const { method, timeoutMs } = steps;
      let answer: UnaryAnswer | undefined;
      try {
        const input = await steps.input();
        answer = await options.call(method, {
          input,
          header: requestHeaders(req.headers, wire),
          life,
          contextValues: (options.contextValues?.(req) ?? createContextValues()).set(protocolKey, wire),
          timeoutMs: timeoutMs === undefined ? undefined : timeoutMs - (Date.now() - arrived),
          url: steps.url,
          trailer: steps.trailer,
        });
        const encoded = steps.encode?.(answer) as T;
        return res.destroyed ? gone() : { answer, encoded };
      } catch (e) {
        if (res.destroyed || (e instanceof BodyRefusedError && e.reason === "aborted")) return gone();
        const error = asConnectError(e);
        return { error, answered: options.callError?.(error, method) ?? error, answer };
      }
    },
  };
}

/** Writes an answer with `write`; a write that fails (the client left mid-answer) destroys the response. Never rejects. */
export async function writeOrDestroy(res: NodeResponse, write: () => void | Promise<void>): Promise<void> {
  try {
    await write();
  } catch {
    if (!res.destroyed) res.destroy();
  }
}
