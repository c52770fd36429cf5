import type { ExternalGroupRoleMapping } from "../../../gen/platform/iam/v2/external_group_role_mapping_pb.js";
import type { Violations } from "../../aip/validation.js";

/** The updatable fields (AIP-134 mask paths). */
export const EXTERNAL_GROUP_ROLE_MAPPING_UPDATABLE = ["external_group_id", "role_uid"] as const;

/** Checks a mapping's writable fields. */
export function checkExternalGroupRoleMappingFields(violations: Violations, m: ExternalGroupRoleMapping, prefix = "external_group_role_mapping."): void {
  violations.text(`${prefix}external_group_id`, m.externalGroupId, { required: true, max: 256 });
  violations.uid(`${prefix}role_uid`, m.roleUid);
}
