import { getOption, type DescMethod } from "@bufbuild/protobuf";
import { auth, type AuthRule } from "../../gen/platform/common/v1/authorization_pb.js";
import { capabilityName } from "./capabilities.js";

/**
 * Services we serve that are not ours and carry no auth option: gRPC health and
 * reflection describe the server, not its data, and are public.
 */
export const PUBLIC_INFRASTRUCTURE_SERVICES = new Set([
  "grpc.health.v1.Health",
  "grpc.reflection.v1.ServerReflection",
  "grpc.reflection.v1alpha.ServerReflection",
]);

/** A method's declared requirement, resolved once; `admitsUnregistered` is the rule's `admits_unregistered`. */
export type Requirement = Need & { admitsUnregistered?: boolean };

type Need =
  | { kind: "none" }
  | { kind: "authenticated" }
  | {
      kind: "scoped";
      /** Proto field names of the scope field, e.g. ["group", "uid"]. */
      field: string[];
      /** The same path as message property names; filled by the interceptor from the request descriptor. */
      path?: string[];
      stripSegments: number;
      capabilities: string[];
      emptyAdmitsAuthenticated: boolean;
      /** A root-level uid (a built-in role) admits any verified caller; the handler decides. */
      rootAdmitsAuthenticated: boolean;
    }
  | { kind: "unscoped"; capabilities: string[] }
  | { kind: "undeclared" };

export function requirementOf(method: DescMethod): Requirement {
  if (PUBLIC_INFRASTRUCTURE_SERVICES.has(method.parent.typeName)) return { kind: "none" };
  const rule: AuthRule = getOption(method, auth);
  const need = needOf(rule);
  return rule.admitsUnregistered ? { ...need, admitsUnregistered: true } : need;
}

function needOf(rule: AuthRule): Need {
  const r = rule.requirement;
  switch (r.case) {
    case "none":
      return { kind: "none" };
    case "authenticated":
      return { kind: "authenticated" };
    case "scoped":
      return {
        kind: "scoped",
        field: r.value.field.split("."),
        stripSegments: r.value.stripSegments,
        capabilities: r.value.capabilities.map(capabilityName),
        emptyAdmitsAuthenticated: r.value.emptyAdmitsAuthenticated,
        rootAdmitsAuthenticated: r.value.rootAdmitsAuthenticated,
      };
    case "unscoped":
      return { kind: "unscoped", capabilities: r.value.capabilities.map(capabilityName) };
    default:
      return { kind: "undeclared" };
  }
}
