import { create } from "@bufbuild/protobuf";
import type { ServiceImpl } from "@connectrpc/connect";
import { GroupInviteListSchema, GroupInvites } from "../../../../gen/platform/iam/v1/group_invites_pb.js";
import { GroupInvitesService } from "../../../../gen/platform/iam/v2/group_invites_service_pb.js";
import { callV2, deleteV1, listAllOf } from "../../../aip/v1/index.js";
import { Violations } from "../../../aip/validation.js";
import { groupInviteToV1, storedGroupInviteToV1 } from "./group-invite-mapper.js";

const v2 = GroupInvitesService.method;

/** GroupInvites v1 (`/iam/v1/group_invites`): each call is the v2 GroupInvitesService call it maps onto. */
export function createGroupInvitesV1Service(invites: ServiceImpl<typeof GroupInvitesService>): ServiceImpl<typeof GroupInvites> {
  return {
    create: async (req, ctx) =>
      groupInviteToV1(
        await callV2(
          v2.createGroupInvite,
          invites.createGroupInvite,
          { parent: req.group, groupInvite: { roleUid: req.role, email: req.email, ttl: req.ttl, singleUse: req.singleUse } },
          ctx,
          { parent: "group", group_invite: "", "group_invite.role_uid": "role" },
        ),
      ),

    list: async (req, ctx) => {
      new Violations().uid("group", req.group, false).throwIfAny();
      const items = await listAllOf({ id: req.id, uidp: { childrenOf: req.group } }, (uidp, page) => callV2(v2.listGroupInvites, invites.listGroupInvites, { uidp, ...page }, ctx), (answer) => answer.groupInvites);
      return create(GroupInviteListSchema, { items: items.map(storedGroupInviteToV1) });
    },

    delete: (req, ctx) => deleteV1("group invite", req.id, () => callV2(v2.deleteGroupInvite, invites.deleteGroupInvite, { uid: req.id }, ctx)),
  };
}
