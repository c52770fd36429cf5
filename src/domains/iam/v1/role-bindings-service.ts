import { create } from "@bufbuild/protobuf";
import type { ServiceImpl } from "@connectrpc/connect";
import { RoleBindingListSchema, RoleBindings } from "../../../../gen/platform/iam/v1/role_binding_pb.js";
import { RoleBindingsService } from "../../../../gen/platform/iam/v2/role_bindings_service_pb.js";
import { callV2, deleteV1, listAllOf, replaceAll } from "../../../aip/v1/index.js";
import { roleBindingFromV1, roleBindingToV1 } from "./role-binding-mapper.js";

const v2 = RoleBindingsService.method;

/** RoleBindings v1 (`/iam/v1/rolebindings`): each call is the v2 RoleBindingsService call it maps onto. */
export function createRoleBindingsV1Service(bindings: ServiceImpl<typeof RoleBindingsService>): ServiceImpl<typeof RoleBindings> {
  return {
    create: async (req, ctx) =>
      roleBindingToV1(
        await callV2(v2.createRoleBinding, bindings.createRoleBinding, { parent: req.parent, roleBinding: roleBindingFromV1(req.roleBinding) }, ctx, {
          "role_binding.identity_uid": "role_binding.identity",
          "role_binding.role_uid": "role_binding.role",
        }),
      ),

    update: async (req, ctx) =>
      roleBindingToV1(await callV2(v2.updateRoleBinding, bindings.updateRoleBinding, { roleBinding: roleBindingFromV1(req), updateMask: replaceAll() }, ctx, {
          role_binding: "",
          "role_binding.identity_uid": "identity",
          "role_binding.role_uid": "role",
        })),

    list: async (req, ctx) => {
      const items = await listAllOf(req, (uidp, page) => callV2(v2.listRoleBindings, bindings.listRoleBindings, { uidp, ...page }, ctx), (answer) => answer.roleBindings);
      return create(RoleBindingListSchema, { items: items.map(roleBindingToV1) });
    },

    delete: (req, ctx) => deleteV1("role binding", req.id, () => callV2(v2.deleteRoleBinding, bindings.deleteRoleBinding, { uid: req.id }, ctx)),
  };
}
