import type { DescMethod, DescService } from "@bufbuild/protobuf";

/** The unary methods of `services` by request path (`/<service>/<Method>`, as the adapter routes them). */
export function unaryMethodsByPath(services: DescService[]): Map<string, DescMethod> {
  const methods = new Map<string, DescMethod>();
  for (const service of services) {
    for (const method of service.methods) if (method.methodKind === "unary") methods.set(`/${service.typeName}/${method.name}`, method);
  }
  return methods;
}
