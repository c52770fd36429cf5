import type { Violations } from "../../aip/validation.js";

/** ListMembers' own field: `parent`, a group's uid (required). */
export function checkMembersParent(violations: Violations, parent: string): void {
  violations.uid("parent", parent);
}
