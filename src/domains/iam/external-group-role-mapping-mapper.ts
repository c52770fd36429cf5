import { create } from "@bufbuild/protobuf";
import { ExternalGroupRoleMappingSchema, type ExternalGroupRoleMapping } from "../../../gen/platform/iam/v2/external_group_role_mapping_pb.js";
import { toTimestamp } from "../../aip/time.js";
import type { ExternalGroupRoleMappingRow } from "./store/external-group-role-mappings.js";

export function externalGroupRoleMappingFromRow(row: ExternalGroupRoleMappingRow): ExternalGroupRoleMapping {
  return create(ExternalGroupRoleMappingSchema, {
    uid: row.uid,
    identityProviderUid: row.identity_provider_uid,
    externalGroupId: row.external_group,
    roleUid: row.role_uid,
    createTime: toTimestamp(row.create_time),
    updateTime: toTimestamp(row.update_time),
  });
}
