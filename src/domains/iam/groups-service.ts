import { create } from "@bufbuild/protobuf";
import { EmptySchema } from "@bufbuild/protobuf/wkt";
import type { ServiceImpl } from "@connectrpc/connect";
import { GroupSchema } from "../../../gen/platform/iam/v2/group_pb.js";
import { GroupsService } from "../../../gen/platform/iam/v2/groups_service_pb.js";
import { permissionDenied } from "../../aip/errors.js";
import { newChildUid, newRootUid, isRoot } from "../../aip/uidp.js";
import { Violations } from "../../aip/validation.js";
import { checkedPatch, checkedUpdate, getMethod, listMethod, nameFilter } from "../kit/standard-methods.js";
import { builtInRole } from "../../access/capabilities.js";
import { principalKey } from "../../access/principal.js";
import { deleteGroup, getGroup, groupOrderable, insertGroup, listGroups, updateGroup } from "./store/groups.js";
import { bindRole } from "./store/role-bindings.js";
import { personOf, registerForOrganization } from "./people.js";
import { inTransaction } from "../../store/transaction.js";
import type { ServiceDeps } from "../kit/deps.js";
import { groupFromRow } from "./group-mapper.js";
import { checkGroupFields } from "./group-validation.js";

/** GroupsService: the organization tree. Authorization ran in the interceptors. */
export function createGroupsService({ db, pager, now, organizationCreation, ownership }: ServiceDeps): ServiceImpl<typeof GroupsService> {
  return {
    getGroup: (req) => getMethod(req.uid, (uid) => getGroup(db, uid), groupFromRow),

    listGroups: (req, ctx) => listMethod(ctx, pager, GroupsService.method.listGroups, req, "groups", {
      orderable: groupOrderable,
      ...nameFilter(req.name, { max: 128 }, (filter, page) => listGroups(db, filter, page)),
      map: groupFromRow,
    }),

    async createGroup(req, ctx) {
      const group = req.group ?? create(GroupSchema);
      const isOrganization = req.parent === "";
      if (isOrganization && organizationCreation !== "anyone") {
        throw permissionDenied("organizations are created by the operator (`platform-api bootstrap`); this server does not let callers create them");
      }
      const violations = new Violations().parent("parent", req.parent, false);
      checkGroupFields(violations, group, isOrganization);
      violations.throwIfAny();
      const time = now();
      const row = {
        uid: isOrganization ? newRootUid() : newChildUid(req.parent),
        parent_uid: req.parent,
        name: group.name,
        description: group.description,
        create_time: time,
        update_time: time,
      };
      const caller = ctx.values.get(principalKey);
      return inTransaction(db, ctx.signal, async (trx) => {
        await insertGroup(trx, row);
        if (isOrganization && caller) {
          // A person signed in but not registered becomes a registered one by owning what they create.
          if (caller.unregistered && caller.person) await registerForOrganization(trx, personOf(caller.person), time);
          await bindRole(trx, row.uid, caller.identityUid, builtInRole("owner").uid, time);
        }
        return groupFromRow(row);
      });
    },

    async updateGroup(req, ctx) {
      const patch = checkedPatch(GroupSchema, req.group, "group");
      return inTransaction(db, ctx.signal, async (trx) => {
        const current = groupFromRow(await getGroup(trx, patch.uid));
        const [next] = checkedUpdate(GroupSchema, current, patch, req.updateMask, ["name", "description"], (violations, next) => checkGroupFields(violations, next, isRoot(next.uid)));
        return groupFromRow(await updateGroup(trx, next.uid, { name: next.name, description: next.description, update_time: now() }));
      });
    },

    async deleteGroup(req, ctx) {
      await inTransaction(db, ctx.signal, (trx) => deleteGroup(trx, req.uid, ownership.ownedByGroup));
      return create(EmptySchema);
    },
  };
}
