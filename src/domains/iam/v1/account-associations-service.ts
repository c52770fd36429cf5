import { create } from "@bufbuild/protobuf";
import type { ServiceImpl } from "@connectrpc/connect";
import { AccountAssociationsListSchema, GroupAccountAssociations } from "../../../../gen/platform/iam/v1/account_associations_pb.js";
import { AccountAssociationsService } from "../../../../gen/platform/iam/v2/account_associations_service_pb.js";
import { callV2, deleteV1, listAllOf, replaceAll } from "../../../aip/v1/index.js";
import { accountAssociationFromV1, accountAssociationToV1 } from "./account-association-mapper.js";

const v2 = AccountAssociationsService.method;

/** GroupAccountAssociations v1 (`/iam/v1/account_associations`): each call is the v2 AccountAssociationsService call it maps onto. */
export function createAccountAssociationsV1Service(associations: ServiceImpl<typeof AccountAssociationsService>): ServiceImpl<typeof GroupAccountAssociations> {
  return {
    create: async (req, ctx) =>
      accountAssociationToV1(
        await callV2(v2.createAccountAssociation, associations.createAccountAssociation, { parent: req.group, accountAssociation: accountAssociationFromV1({ ...req, group: "" }) }, ctx, { parent: "group", account_association: "" }),
      ),

    update: async (req, ctx) =>
      accountAssociationToV1(
        await callV2(v2.updateAccountAssociation, associations.updateAccountAssociation, { accountAssociation: accountAssociationFromV1(req), updateMask: replaceAll() }, ctx, { account_association: "" }),
      ),

    list: async (req, ctx) => {
      const items = await listAllOf({ id: req.group }, (uidp, page) => callV2(v2.listAccountAssociations, associations.listAccountAssociations, { uidp, name: req.name, ...page }, ctx), (answer) => answer.accountAssociations);
      return create(AccountAssociationsListSchema, { items: items.map(accountAssociationToV1) });
    },

    delete: (req, ctx) =>
      deleteV1("account association", req.group, () => callV2(v2.deleteAccountAssociation, associations.deleteAccountAssociation, { uid: req.group }, ctx)),
  };
}
