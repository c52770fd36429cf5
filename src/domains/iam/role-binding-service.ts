import { create } from "@bufbuild/protobuf";
import type { ServiceImpl } from "@connectrpc/connect";
import { RoleBindingInputSchema } from "../../../gen/platform/iam/v2/role_binding_pb.js";
import { RoleBindingsService } from "../../../gen/platform/iam/v2/role_bindings_service_pb.js";
import { invalidField } from "../../aip/errors.js";
import { applyFieldMask } from "../../aip/field-mask.js";
import { newChildUid } from "../../aip/uidp.js";
import { idempotentDeleteMethod, getMethod, listMethod } from "../kit/standard-methods.js";
import { Violations } from "../../aip/validation.js";
import { principalKey } from "../../access/principal.js";
import { getGroup } from "./store/groups.js";
import { getIdentity } from "./store/identities.js";
import { createRoleBinding, deleteRoleBinding, getRoleBinding, listRoleBindings, roleBindingOrderable, setBindingRole } from "./store/role-bindings.js";
import { getRole } from "./store/roles.js";
import { inTransaction } from "../../store/transaction.js";
import type { ServiceDeps } from "../kit/deps.js";
import { checkBindingScope, identityUid } from "./role-binding-validation.js";
import { roleBindingFromRow } from "./role-binding-mapper.js";
import { requireGrantable } from "./role-validation.js";

/**
 * RoleBindingsService. The interceptor checked the binding capability on the
 * group; granting a role also needs every capability of the role there
 * (requireGrantable), so nobody hands out more than they hold.
 */
export function createRoleBindingsService({ db, pager, now }: ServiceDeps): ServiceImpl<typeof RoleBindingsService> {
  return {
    getRoleBinding: (req) => getMethod(req.uid, (uid) => getRoleBinding(db, uid), roleBindingFromRow),

    listRoleBindings: (req, ctx) => listMethod(ctx, pager, RoleBindingsService.method.listRoleBindings, req, "roleBindings", {
      orderable: roleBindingOrderable,
      validate: (v) => v.uid("identity", req.identity, false).uid("group", req.group, false).uid("role", req.role, false),
      read: (page, scope) =>
        listRoleBindings(db, { identity: req.identity || undefined, group: req.group || undefined, role: req.role || undefined, ...scope }, page),
      map: roleBindingFromRow,
    }),

    async createRoleBinding(req, ctx) {
      const input = req.roleBinding ?? create(RoleBindingInputSchema);
      const violations = new Violations().parent("parent", req.parent);
      identityUid(violations, "role_binding.identity_uid", input.identityUid);
      violations.uid("role_binding.role_uid", input.roleUid);
      violations.throwIfAny();
      checkBindingScope(req.parent, input.identityUid, input.roleUid);
      return inTransaction(db, ctx.signal, async (trx) => {
        await getGroup(trx, req.parent);
        await getIdentity(trx, input.identityUid);
        const role = await getRole(trx, input.roleUid);
        requireGrantable(ctx.values.get(principalKey), req.parent, role.capabilities, `binding role ${role.uid}`);
        const uid = newChildUid(req.parent);
        await createRoleBinding(trx, { uid, group_uid: req.parent, identity_uid: input.identityUid, role_uid: role.uid, create_time: now() });
        return roleBindingFromRow(await getRoleBinding(trx, uid));
      });
    },

    async updateRoleBinding(req, ctx) {
      const patch = req.roleBinding ?? create(RoleBindingInputSchema);
      new Violations().uid("role_binding.uid", patch.uid).throwIfAny();
      return inTransaction(db, ctx.signal, async (trx) => {
        const current = await getRoleBinding(trx, patch.uid);
        if (patch.identityUid !== "" && patch.identityUid !== current.identity_uid) {
          throw invalidField("role_binding.identity_uid", "cannot change; delete the binding and create another");
        }
        const before = create(RoleBindingInputSchema, { uid: current.uid, identityUid: current.identity_uid, roleUid: current.role_uid });
        const next = applyFieldMask(RoleBindingInputSchema, before, patch, req.updateMask, ["role_uid"]);
        new Violations().uid("role_binding.role_uid", next.roleUid).throwIfAny();
        if (next.roleUid === current.role_uid) return roleBindingFromRow(current);
        checkBindingScope(current.group_uid, current.identity_uid, next.roleUid);
        const role = await getRole(trx, next.roleUid);
        requireGrantable(ctx.values.get(principalKey), current.group_uid, role.capabilities, `binding role ${role.uid}`);
        await setBindingRole(trx, current.uid, role.uid);
        return roleBindingFromRow(await getRoleBinding(trx, current.uid));
      });
    },

    deleteRoleBinding: (req, ctx) => idempotentDeleteMethod(db, ctx, req.uid, deleteRoleBinding),
  };
}
