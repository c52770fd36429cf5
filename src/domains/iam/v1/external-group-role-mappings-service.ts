import { create } from "@bufbuild/protobuf";
import type { ServiceImpl } from "@connectrpc/connect";
import { ExternalGroupRoleMappingListSchema, ExternalGroupRoleMappings } from "../../../../gen/platform/iam/v1/external_group_role_mappings_pb.js";
import { ExternalGroupRoleMappingsService } from "../../../../gen/platform/iam/v2/external_group_role_mappings_service_pb.js";
import { callV2, deleteV1, listAll } from "../../../aip/v1/index.js";
import { externalGroupRoleMappingToV1 } from "./external-group-role-mapping-mapper.js";

const v2 = ExternalGroupRoleMappingsService.method;

/** ExternalGroupRoleMappings v1 (`/iam/v1/externalGroupRoleMappings`): each call is the v2 call it maps onto. */
export function createExternalGroupRoleMappingsV1Service(
  mappings: ServiceImpl<typeof ExternalGroupRoleMappingsService>,
): ServiceImpl<typeof ExternalGroupRoleMappings> {
  return {
    create: async (req, ctx) =>
      externalGroupRoleMappingToV1(
        await callV2(
          v2.createExternalGroupRoleMapping,
          mappings.createExternalGroupRoleMapping,
          { parent: req.parentId, externalGroupRoleMapping: { externalGroupId: req.mapping?.externalGroupId ?? "", roleUid: req.mapping?.roleUidp ?? "" } },
          ctx,
          { parent: "parent_id", external_group_role_mapping: "mapping", "external_group_role_mapping.role_uid": "mapping.role_uidp" },
        ),
      ),

    list: async (req, ctx) => {
      const items = await listAll(req, async (uidp, page) => {
        const answer = await callV2(
          v2.listExternalGroupRoleMappings,
          mappings.listExternalGroupRoleMappings,
          { uidp, identityProviderUid: req.identityProviderUidp, ...page },
          ctx,
        );
        return { items: answer.externalGroupRoleMappings, nextPageToken: answer.nextPageToken };
      });
      return create(ExternalGroupRoleMappingListSchema, { items: items.map(externalGroupRoleMappingToV1) });
    },

    delete: (req, ctx) =>
      deleteV1("external group role mapping", req.id, () => callV2(v2.deleteExternalGroupRoleMapping, mappings.deleteExternalGroupRoleMapping, { uid: req.id }, ctx)),
  };
}
