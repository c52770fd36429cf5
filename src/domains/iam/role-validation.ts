import { Cap, CapSchema } from "../../../gen/platform/common/v1/authorization_pb.js";
import { failedPrecondition, permissionDenied, unauthenticated, type ApiError } from "../../aip/errors.js";
import type { Violations } from "../../aip/validation.js";
import type { Principal } from "../../access/principal.js";

/**
 * Checks a role's writable fields and returns its capability names, without
 * duplicates. Unknown and unspecified capabilities are named by index.
 */
export function checkRoleFields(
  violations: Violations,
  role: { name: string; description: string; capabilities: readonly Cap[] },
  prefix = "role.",
): string[] {
  violations.name(`${prefix}name`, role.name, { required: true, max: 64 });
  violations.description(`${prefix}description`, role.description);
  const names = new Set<string>();
  role.capabilities.forEach((cap, i) => {
    const value = CapSchema.values.find((v) => v.number === cap);
    if (cap === Cap.UNSPECIFIED) violations.add(`${prefix}capabilities[${i}]`, "CAP_UNSPECIFIED is not a capability");
    else if (!value) violations.add(`${prefix}capabilities[${i}]`, `unknown capability ${cap}`);
    else names.add(value.name);
  });
  return [...names].sort();
}

/**
 * The anti-escalation rule of roles and bindings: a caller may only grant (bind,
 * or add to a custom role) capabilities it holds itself on `group`. Throws
 * PERMISSION_DENIED naming the missing ones. The one place this decision is made.
 */
export function requireGrantable(principal: Principal | undefined, group: string, capabilities: readonly string[], what: string): void {
  if (!principal) throw unauthenticated("this call needs `Authorization: Bearer <token>`");
  if (capabilities.length === 0) return;
  const missing = capabilities.filter((c) => !principal.grants.has(group, [c]));
  if (missing.length > 0) throw permissionDenied(`${what} needs every capability it grants on ${group}; the caller lacks ${missing.join(", ")}`);
}

/** Built-in roles cannot be changed or deleted. */
export function builtInRoleImmutable(uid: string): ApiError {
  return failedPrecondition([{ type: "BUILT_IN_ROLE", subject: uid, description: `role ${uid} is built in and cannot be changed or deleted` }]);
}
