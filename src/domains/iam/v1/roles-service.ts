import { create } from "@bufbuild/protobuf";
import type { ServiceImpl } from "@connectrpc/connect";
import { UidpFilterSchema } from "../../../../gen/platform/common/v1/uidp_pb.js";
import { RoleListSchema, Roles } from "../../../../gen/platform/iam/v1/role_pb.js";
import { RolesService } from "../../../../gen/platform/iam/v2/roles_service_pb.js";
import { callV2, deleteV1, listAllOf, replaceAll } from "../../../aip/v1/index.js";
import { Violations } from "../../../aip/validation.js";
import { roleFromV1, roleToV1 } from "./role-mapper.js";

const v2 = RolesService.method;

/** Roles v1 (`/iam/v1/roles`): each call is the v2 RolesService call it maps onto. */
export function createRolesV1Service(roles: ServiceImpl<typeof RolesService>): ServiceImpl<typeof Roles> {
  return {
    create: async (req, ctx) => roleToV1(await callV2(v2.createRole, roles.createRole, { parent: req.parentId, role: roleFromV1(req.role, "role.capabilities") }, ctx, { parent: "parent_id" })),

    update: async (req, ctx) => roleToV1(await callV2(v2.updateRole, roles.updateRole, { role: roleFromV1(req, "capabilities"), updateMask: replaceAll() }, ctx, { role: "" })),

    list: async (req, ctx) => {
      new Violations().uid("parent", req.parent, false).throwIfAny();
      // `parent` is the hosted filter for "defined in this group": the uidp filter's children_of.
      if (req.parent !== "" && req.uidp?.childrenOf && req.uidp.childrenOf !== req.parent) return create(RoleListSchema);
      const filter = { id: req.id, uidp: create(UidpFilterSchema, req.uidp ?? {}) };
      if (req.parent !== "") filter.uidp.childrenOf = req.parent;
      const items = await listAllOf(filter, (uidp, page) => callV2(v2.listRoles, roles.listRoles, { uidp, name: req.name, ...page }, ctx), (answer) => answer.roles);
      return create(RoleListSchema, { items: items.map(roleToV1) });
    },

    delete: (req, ctx) => deleteV1("role", req.id, () => callV2(v2.deleteRole, roles.deleteRole, { uid: req.id }, ctx)),
  };
}
