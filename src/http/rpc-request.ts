import type { DescMethod, DescService } from "@bufbuild/protobuf";
import type { NodeRequest } from "./node-types.js";

/** The unary methods of `services` by request path (`/<service>/<Method>`, as the adapter routes them). */
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
