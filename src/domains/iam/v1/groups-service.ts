import { create } from "@bufbuild/protobuf";
import type { ServiceImpl } from "@connectrpc/connect";
import { GroupListSchema, Groups } from "../../../../gen/platform/iam/v1/group_pb.js";
import { GroupsService } from "../../../../gen/platform/iam/v2/groups_service_pb.js";
import { callV2, deleteV1, listAllOf, replaceAll } from "../../../aip/v1/index.js";
import { groupFromV1, groupToV1 } from "./group-mapper.js";

const v2 = GroupsService.method;

/** Groups v1 (`/iam/v1/groups`): each call is the v2 GroupsService call it maps onto. */
export function createGroupsV1Service(groups: ServiceImpl<typeof GroupsService>): ServiceImpl<typeof Groups> {
  return {
    create: async (req, ctx) => groupToV1(await callV2(v2.createGroup, groups.createGroup, { parent: req.parent, group: groupFromV1(req.group) }, ctx)),

    update: async (req, ctx) => groupToV1(await callV2(v2.updateGroup, groups.updateGroup, { group: groupFromV1(req), updateMask: replaceAll() }, ctx, { group: "" })),

    list: async (req, ctx) => {
      const items = await listAllOf(req, (uidp, page) => callV2(v2.listGroups, groups.listGroups, { uidp, name: req.name, ...page }, ctx), (answer) => answer.groups);
      return create(GroupListSchema, { items: items.map(groupToV1) });
    },

    delete: (req, ctx) => deleteV1("group", req.id, () => callV2(v2.deleteGroup, groups.deleteGroup, { uid: req.id }, ctx)),
  };
}
