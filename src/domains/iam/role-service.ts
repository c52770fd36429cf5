import { create } from "@bufbuild/protobuf";
import { EmptySchema } from "@bufbuild/protobuf/wkt";
import type { ServiceImpl } from "@connectrpc/connect";
import { RoleSchema } from "../../../gen/platform/iam/v2/role_pb.js";
import { RolesService } from "../../../gen/platform/iam/v2/roles_service_pb.js";
import { newChildUid } from "../../aip/uidp.js";
import { checkedCreate, checkedPatch, checkedUpdate, getMethod, listMethod, nameFilter } from "../kit/standard-methods.js";
import { Violations } from "../../aip/validation.js";
import { principalKey } from "../../access/principal.js";
import { deleteRole, getRole, insertRole, listRoles, roleOrderable, updateRole } from "./store/roles.js";
import { inTransaction } from "../../store/transaction.js";
import type { ServiceDeps } from "../kit/deps.js";
import { roleFromRow } from "./role-mapper.js";
import { builtInRoleImmutable, checkRoleFields, requireGrantable } from "./role-validation.js";

/**
 * RolesService: custom roles of groups, and the built-in roles (readable by
 * every verified caller, immutable). Authorization ran in the interceptors;
 * only the anti-escalation rule needs the role's data (requireGrantable).
 */
export function createRolesService({ db, pager, now }: ServiceDeps): ServiceImpl<typeof RolesService> {
  return {
    getRole: (req) => getMethod(req.uid, (uid) => getRole(db, uid), roleFromRow),

    listRoles: (req, ctx) => listMethod(ctx, pager, RolesService.method.listRoles, req, "roles", {
      orderable: roleOrderable,
      ...nameFilter(req.name, { max: 64 }, (filter, page) => listRoles(db, filter, page)),
      map: roleFromRow,
    }),

    async createRole(req, ctx) {
      const [role, capabilities] = checkedCreate(RoleSchema, req.role, req.parent, checkRoleFields);
      const time = now();
      const row = { uid: newChildUid(req.parent), group_uid: req.parent, name: role.name, description: role.description, built_in: 0, create_time: time, update_time: time };
      return inTransaction(db, ctx.signal, async (trx) => roleFromRow(await insertRole(trx, row, capabilities)));
    },

    async updateRole(req, ctx) {
      const patch = checkedPatch(RoleSchema, req.role, "role");
      return inTransaction(db, ctx.signal, async (trx) => {
        const stored = await getRole(trx, patch.uid);
        if (stored.built_in) throw builtInRoleImmutable(stored.uid);
        const [next, capabilities] = checkedUpdate(RoleSchema, roleFromRow(stored), patch, req.updateMask, ["name", "description", "capabilities"], checkRoleFields);
        const added = capabilities.filter((c) => !stored.capabilities.includes(c));
        requireGrantable(ctx.values.get(principalKey), stored.group_uid, added, `adding capabilities to role ${stored.uid}`);
        return roleFromRow(await updateRole(trx, stored.uid, { name: next.name, description: next.description, update_time: now() }, capabilities));
      });
    },

    async deleteRole(req, ctx) {
      new Violations().uid("uid", req.uid).throwIfAny();
      await inTransaction(db, ctx.signal, async (trx) => {
        const stored = await getRole(trx, req.uid);
        if (stored.built_in) throw builtInRoleImmutable(stored.uid);
        await deleteRole(trx, req.uid);
      });
      return create(EmptySchema);
    },
  };
}
