import { create } from "@bufbuild/protobuf";
import { rolesByUid } from "./store/roles.js";
import type { ServiceImpl } from "@connectrpc/connect";
import { GroupInviteSchema } from "../../../gen/platform/iam/v2/group_invite_pb.js";
import { GroupInvitesService, RedeemGroupInviteResponseSchema } from "../../../gen/platform/iam/v2/group_invites_service_pb.js";
import { unauthenticated } from "../../aip/errors.js";
import { newChildUid } from "../../aip/uidp.js";
import { checkedCreate, checkedPatch, checkedUpdate, idempotentDeleteMethod, listMethod } from "../kit/standard-methods.js";
import { Violations } from "../../aip/validation.js";
import { principalKey } from "../../access/principal.js";
import { redeemInviteOnce } from "./people.js";
import {
  deleteGroupInvite,
  getGroupInvite,
  groupInviteOrderable,
  insertGroupInvite,
  listGroupInvites,
  updateGroupInvite,
} from "./store/group-invites.js";
import { inTransaction } from "../../store/transaction.js";
import type { ServiceDeps } from "../kit/deps.js";
import type { RoleWithCapabilities } from "./store/roles.js";
import { groupInviteFromRow, inviteCodeHash, newInviteCode } from "./group-invite-mapper.js";
import { checkGroupInviteFields, checkSingleUseKept, GROUP_INVITE_UPDATABLE } from "./group-invite-validation.js";
import { requireGrantableRole } from "./grantable-role.js";


/** GroupInvitesService: codes that bind their redeemer to a role on a group. */
export function createGroupInvitesService({ db, pager, now }: ServiceDeps): ServiceImpl<typeof GroupInvitesService> {
  return {
    async getGroupInvite(req) {
      new Violations().uid("uid", req.uid).throwIfAny();
      const row = await getGroupInvite(db, req.uid);
      return groupInviteFromRow(row, (await rolesByUid(db, [row.role_uid])).get(row.role_uid));
    },

    async listGroupInvites(req, ctx) {
      let roles = new Map<string, RoleWithCapabilities>();
      return listMethod(ctx, pager, GroupInvitesService.method.listGroupInvites, req, "groupInvites", {
        orderable: groupInviteOrderable,
        validate: (v) => v.uid("role_uid", req.roleUid, false),
        read: async (page, scope) => {
          const found = await listGroupInvites(db, { roleUid: req.roleUid || undefined, ...scope }, page);
          roles = await rolesByUid(db, found.rows.map((r) => r.role_uid));
          return found;
        },
        map: (row) => groupInviteFromRow(row, roles.get(row.role_uid)),
      });
    },

    async createGroupInvite(req, ctx) {
      const [invite, ttl] = checkedCreate(GroupInviteSchema, req.groupInvite, req.parent, checkGroupInviteFields);
      const time = now();
      const code = newInviteCode();
      const row = {
        uid: newChildUid(req.parent),
        group_uid: req.parent,
        role_uid: invite.roleUid,
        email: invite.email,
        code_hash: inviteCodeHash(code),
        single_use: invite.singleUse ? 1 : 0,
        expire_time: time + ttl,
        used_time: null,
        create_time: time,
        update_time: time,
      };
      return inTransaction(db, ctx.signal, async (trx) => {
        await requireGrantableRole(trx, ctx, row.role_uid, row.group_uid);
        await insertGroupInvite(trx, row);
        return groupInviteFromRow(row, (await rolesByUid(trx, [row.role_uid])).get(row.role_uid), code);
      });
    },

    async updateGroupInvite(req, ctx) {
      const patch = checkedPatch(GroupInviteSchema, req.groupInvite, "group_invite");
      const time = now();
      return inTransaction(db, ctx.signal, async (trx) => {
        const stored = await getGroupInvite(trx, patch.uid);
        const [next, ttl] = checkedUpdate(GroupInviteSchema, groupInviteFromRow(stored, undefined), patch, req.updateMask, GROUP_INVITE_UPDATABLE, (violations, next) => {
          const ttl = checkGroupInviteFields(violations, next);
          checkSingleUseKept(violations, stored.single_use === 1, next.singleUse);
          return ttl;
        });
        if (next.roleUid !== stored.role_uid) await requireGrantableRole(trx, ctx, next.roleUid, stored.group_uid);
        const expire_time = next.ttl ? time + ttl : stored.expire_time;
        const row = await updateGroupInvite(trx, stored.uid, { role_uid: next.roleUid, email: next.email, expire_time, update_time: time });
        return groupInviteFromRow(row, (await rolesByUid(trx, [row.role_uid])).get(row.role_uid));
      });
    },

    deleteGroupInvite: (req, ctx) => idempotentDeleteMethod(db, ctx, req.uid, deleteGroupInvite),

    async redeemGroupInvite(req, ctx) {
      const caller = ctx.values.get(principalKey);
      if (!caller) throw unauthenticated("redeeming an invite needs `Authorization: Bearer <token>`");
      new Violations().text("code", req.code, { required: true, max: 128 }).throwIfAny();
      // Redeeming again answers the binding the identity has and changes nothing: no event.
      return redeemInviteOnce(db, ctx.signal, caller, req.code, now(), (done) =>
        create(RedeemGroupInviteResponseSchema, { roleBindingUid: done.bindingUid, groupUid: done.groupUid, roleUid: done.roleUid }),
      );
    },
  };
}
