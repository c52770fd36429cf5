import type { DescMethod, DescService } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import type { NodeRequest, NodeResponse } from "../http/node-types.js";

/** The unary methods of `services` by request path (`/<service>/<Method>`, as the adapter routes them). */
/** The longest deadline a caller may send (connect-es's own default `maxTimeoutMs`: no bound). */
export const MAX_TIMEOUT_MS = Number.MAX_SAFE_INTEGER;

export function unaryMethodsByPath(services: DescService[]): Map<string, DescMethod> {
  const methods = new Map<string, DescMethod>();
  for (const service of services) {
    for (const method of service.methods) if (method.methodKind === "unary") methods.set(`/${service.typeName}/${method.name}`, method);
  }
  return methods;
}

/** A request header's value as `Headers.get` gives it (several joined by ", "), null when absent. */
export function headerValue(value: string | string[] | undefined): string | null {
  return value === undefined ? null : Array.isArray(value) ? value.join(", ") : value;
}

/** The request headers a handler sees, as connect-node makes them: the caller's, without HTTP/2 pseudo-headers. */
export function callHeaders(incoming: NodeRequest["headers"]): Headers {
  const header = new Headers();
  for (const name in incoming) {
    const value = incoming[name];
    if (value === undefined || name.charCodeAt(0) === 58 /* ":" */) continue;
    if (Array.isArray(value)) for (const v of value) header.append(name, v);
    else header.append(name, value);
  }
  return header;
}

/**
 * A call's own controller, aborted with CANCELED (`message`) when the client goes away before the
 * answer was written; a finished answer's close aborts nothing. Not `writableFinished`: Node's
 * HTTP/2 compat response reports it true once a reset closed the stream.
 */
export function abortedWhenClientLeaves(res: NodeResponse, message: string): AbortController {
  const controller = new AbortController();
  res.once("close", () => {
    if (!res.writableEnded) controller.abort(new ConnectError(message, Code.Canceled));
  });
  return controller;
}
