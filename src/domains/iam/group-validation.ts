import type { Violations } from "../../aip/validation.js";

/** Organization names appear in registry paths (`<organization>/<image>`). */
export const ORGANIZATION_NAME = /^[a-z0-9]+([._-][a-z0-9]+)*$/;

/** Checks a group's writable fields; `isOrganization` selects the name rule. */
export function checkGroupFields(
  violations: Violations,
  group: { name: string; description: string },
  isOrganization: boolean,
  prefix = "group.",
): void {
  if (isOrganization) violations.text(`${prefix}name`, group.name, { required: true, max: 64, pattern: ORGANIZATION_NAME });
  else violations.name(`${prefix}name`, group.name, { required: true, max: 128 });
  violations.description(`${prefix}description`, group.description);
}
