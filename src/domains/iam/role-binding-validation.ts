import { failedPrecondition, type PreconditionViolation } from "../../aip/errors.js";
import { isSelfOrDescendant, parentOf } from "../../aip/uidp.js";
import type { Violations } from "../../aip/validation.js";

/** An identity uid: a uid below a group, or a root-level uid (a person of the server-wide login: people.ts). */
export function identityUid(violations: Violations, field: string, uid: string): void {
  violations.uid(field, uid);
}

/**
 * The scope rules of a binding on `group`, judged from the uids alone (before
 * any read): the identity's group must be `group` or an ancestor (spec 4.3 rule
 * 2: an identity never reaches outside the group it was created under; a server-wide person,
 * a root-level uid, belongs to none), and a
 * custom role's group must be `group` or an ancestor (built-in roles, root-level
 * uids, bind anywhere). FAILED_PRECONDITION otherwise.
 */
export function checkBindingScope(group: string, identity: string, role: string): void {
  const identityGroup = parentOf(identity);
  const violations: PreconditionViolation[] = [];
  // A root-level identity is a person of the server-wide login: they belong to no organization and may join any.
  if (identityGroup !== undefined && !isSelfOrDescendant(group, identityGroup)) {
    violations.push({
      type: "IDENTITY_OUT_OF_SCOPE",
      subject: identity,
      description: `identity ${identity} belongs to group ${identityGroup} and can only be bound on it or a group below it`,
    });
  }
  violations.push(...roleScopeViolations(group, role));
  if (violations.length > 0) throw failedPrecondition(violations);
}

/**
 * The one rule for where a role may be granted (bindings, invites, external group role
 * mappings, identity provider default roles): a built-in role anywhere, a custom role on its
 * group or below. Decided from the uid alone, before any read; FAILED_PRECONDITION with
 * ROLE_OUT_OF_SCOPE otherwise.
 */
export function checkRoleScope(group: string, role: string): void {
  const violations = roleScopeViolations(group, role);
  if (violations.length > 0) throw failedPrecondition(violations);
}

function roleScopeViolations(group: string, role: string): PreconditionViolation[] {
  const roleGroup = parentOf(role);
  if (roleGroup === undefined || isSelfOrDescendant(group, roleGroup)) return [];
  return [
    {
      type: "ROLE_OUT_OF_SCOPE",
      subject: role,
      description: `role ${role} is defined in group ${roleGroup} and can only be granted on it or a group below it`,
    },
  ];
}
