import type { ServiceImpl } from "@connectrpc/connect";
import { MembersService } from "../../../gen/platform/iam/v2/members_service_pb.js";
import type { ServiceDeps } from "../kit/deps.js";
import { listMethod } from "../kit/standard-methods.js";
import { memberFromRow } from "./member-mapper.js";
import { checkMembersParent } from "./member-validation.js";
import { getGroup } from "./store/groups.js";
import { listMembers, memberOrderable } from "./store/members.js";

/**
 * MembersService: who has a role at a group. The interceptor checked the role binding list
 * capability on `parent`; a group that does not exist is NOT_FOUND.
 */
export function createMembersService({ db, pager }: ServiceDeps): ServiceImpl<typeof MembersService> {
  return {
    listMembers: (req, ctx) =>
      listMethod(ctx, pager, MembersService.method.listMembers, req, "members", {
        orderable: memberOrderable,
        validate: (v) => checkMembersParent(v, req.parent),
        read: async (page, scope) => {
          await getGroup(db, req.parent);
          return listMembers(db, { group: req.parent, uidp: scope.uidp }, page);
        },
        map: memberFromRow,
      }),
  };
}
