import type { ServiceImpl } from "@connectrpc/connect";
import { ExternalGroupRoleMappingSchema } from "../../../gen/platform/iam/v2/external_group_role_mapping_pb.js";
import { ExternalGroupRoleMappingsService } from "../../../gen/platform/iam/v2/external_group_role_mappings_service_pb.js";
import { depth, newChildUid, stripSegments } from "../../aip/uidp.js";
import { checkedCreate, checkedPatch, checkedUpdate, deleteMethod, getMethod, listMethod } from "../kit/standard-methods.js";
import { deleteExternalGroupRoleMapping, externalGroupRoleMappingOrderable, getExternalGroupRoleMapping, insertExternalGroupRoleMapping, listExternalGroupRoleMappings, updateExternalGroupRoleMapping } from "./store/external-group-role-mappings.js";
import { inTransaction } from "../../store/transaction.js";
import type { ServiceDeps } from "../kit/deps.js";
import { externalGroupRoleMappingFromRow } from "./external-group-role-mapping-mapper.js";
import { checkExternalGroupRoleMappingFields, EXTERNAL_GROUP_ROLE_MAPPING_UPDATABLE } from "./external-group-role-mapping-validation.js";
import { requireGrantableRole } from "./grantable-role.js";

/** ExternalGroupRoleMappingsService: an IdP group claim value to a role on the provider's group. */
export function createExternalGroupRoleMappingsService({ db, pager, now }: ServiceDeps): ServiceImpl<typeof ExternalGroupRoleMappingsService> {
  return {
    getExternalGroupRoleMapping: (req) => getMethod(req.uid, (uid) => getExternalGroupRoleMapping(db, uid), externalGroupRoleMappingFromRow),

    listExternalGroupRoleMappings: (req, ctx) => listMethod(ctx, pager, ExternalGroupRoleMappingsService.method.listExternalGroupRoleMappings, req, "externalGroupRoleMappings", {
      orderable: externalGroupRoleMappingOrderable,
      validate: (v) => {
        v.text("external_group_id", req.externalGroupId, { max: 256 });
        v.uid("identity_provider_uid", req.identityProviderUid, false);
      },
      read: (page, scope) =>
        listExternalGroupRoleMappings(
          db,
          { externalGroup: req.externalGroupId || undefined, identityProviderUid: req.identityProviderUid || undefined, ...scope },
          page,
        ),
      map: externalGroupRoleMappingFromRow,
    }),

    async createExternalGroupRoleMapping(req, ctx) {
      const [mapping] = checkedCreate(ExternalGroupRoleMappingSchema, req.externalGroupRoleMapping, req.parent, (violations, mapping) => {
        if (violations.list.length === 0 && depth(req.parent) < 2) violations.add("parent", "must be an identity provider uid");
        checkExternalGroupRoleMappingFields(violations, mapping);
      });
      const group = stripSegments(req.parent, 1)!;
      const time = now();
      const row = {
        uid: newChildUid(req.parent),
        group_uid: group,
        identity_provider_uid: req.parent,
        external_group: mapping.externalGroupId,
        role_uid: mapping.roleUid,
        create_time: time,
        update_time: time,
      };
      return inTransaction(db, ctx.signal, async (trx) => {
        await requireGrantableRole(trx, ctx, row.role_uid, group);
        await insertExternalGroupRoleMapping(trx, row);
        return externalGroupRoleMappingFromRow(row);
      });
    },

    async updateExternalGroupRoleMapping(req, ctx) {
      const patch = checkedPatch(ExternalGroupRoleMappingSchema, req.externalGroupRoleMapping, "external_group_role_mapping");
      return inTransaction(db, ctx.signal, async (trx) => {
        const stored = await getExternalGroupRoleMapping(trx, patch.uid);
        const current = externalGroupRoleMappingFromRow(stored);
        const [next] = checkedUpdate(ExternalGroupRoleMappingSchema, current, patch, req.updateMask, EXTERNAL_GROUP_ROLE_MAPPING_UPDATABLE, checkExternalGroupRoleMappingFields);
        if (next.roleUid !== stored.role_uid) await requireGrantableRole(trx, ctx, next.roleUid, stored.group_uid);
        return externalGroupRoleMappingFromRow(
          await updateExternalGroupRoleMapping(trx, stored.uid, { external_group: next.externalGroupId, role_uid: next.roleUid, update_time: now() }),
        );
      });
    },

    deleteExternalGroupRoleMapping: (req, ctx) => deleteMethod(db, ctx, req.uid, deleteExternalGroupRoleMapping),
  };
}
