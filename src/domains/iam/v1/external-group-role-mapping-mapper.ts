import { create } from "@bufbuild/protobuf";
import { ExternalGroupRoleMappingSchema as V1Schema, type ExternalGroupRoleMapping as V1Mapping } from "../../../../gen/platform/iam/v1/external_group_role_mappings_pb.js";
import type { ExternalGroupRoleMapping } from "../../../../gen/platform/iam/v2/external_group_role_mapping_pb.js";

/** A v2 external group role mapping in the v1 shape (`id`, `*_uidp`, `created_at`). */
export function externalGroupRoleMappingToV1(mapping: ExternalGroupRoleMapping): V1Mapping {
  return create(V1Schema, {
    id: mapping.uid,
    identityProviderUidp: mapping.identityProviderUid,
    externalGroupId: mapping.externalGroupId,
    roleUidp: mapping.roleUid,
    createdAt: mapping.createTime,
  });
}
