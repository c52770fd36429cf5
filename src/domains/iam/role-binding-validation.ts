import { failedPrecondition } from "../../api/errors.js";
import { isRoot, isSelfOrDescendant, parentOf } from "../../api/uidp.js";
import type { Violations } from "../../api/validation.js";

/** An identity uid: a valid uid below a group (not root-level). */
export function identityUid(violations: Violations, field: string, uid: string): void {
  violations.uid(field, uid);
  if (violations.list.some((v) => v.field === field)) return;
  if (isRoot(uid)) violations.add(field, "must be an identity uid: <group uid>/<16 hex>");
}

/**
 * The scope rules of a binding on `group`, judged from the uids alone (before
 * any read): the identity's group must be `group` or an ancestor (spec 4.3 rule
 * 2: an identity never reaches outside the group it was created under), and a
 * custom role's group must be `group` or an ancestor (built-in roles, root-level
 * uids, bind anywhere). FAILED_PRECONDITION otherwise.
 */
export function checkBindingScope(group: string, identity: string, role: string): void {
  const identityGroup = parentOf(identity) ?? identity;
  const violations = [];
  if (!isSelfOrDescendant(group, identityGroup)) {
    violations.push({
      type: "IDENTITY_OUT_OF_SCOPE",
      subject: identity,
      description: `identity ${identity} belongs to group ${identityGroup} and can only be bound on it or a group below it`,
    });
  }
  const roleGroup = parentOf(role);
  if (roleGroup !== undefined && !isSelfOrDescendant(group, roleGroup)) {
    violations.push({
      type: "ROLE_OUT_OF_SCOPE",
      subject: role,
      description: `role ${role} is defined in group ${roleGroup} and can only be bound on it or a group below it`,
    });
  }
  if (violations.length > 0) throw failedPrecondition(violations);
}
