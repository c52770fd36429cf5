import type { ServiceImpl } from "@connectrpc/connect";
import { AccountAssociationSchema } from "../../../gen/platform/iam/v2/account_association_pb.js";
import { AccountAssociationsService } from "../../../gen/platform/iam/v2/account_associations_service_pb.js";
import { checkedCreate, checkedPatch, checkedUpdate, idempotentDeleteMethod, getMethod, listMethod, nameFilter } from "../kit/standard-methods.js";
import { accountAssociationOrderable, deleteAccountAssociation, getAccountAssociation, insertAccountAssociation, listAccountAssociations, updateAccountAssociation } from "./store/account-associations.js";
import { inTransaction } from "../../store/transaction.js";
import type { ServiceDeps } from "../kit/deps.js";
import { accountAssociationColumns, accountAssociationFromRow } from "./account-association-mapper.js";
import { ACCOUNT_ASSOCIATION_UPDATABLE, checkAccountAssociationFields } from "./account-association-validation.js";

/** AccountAssociationsService: one association per group, whose uid is the group's uid. */
export function createAccountAssociationsService({ db, pager, now }: ServiceDeps): ServiceImpl<typeof AccountAssociationsService> {
  return {
    getAccountAssociation: (req) => getMethod(req.uid, (uid) => getAccountAssociation(db, uid), accountAssociationFromRow),

    listAccountAssociations: (req, ctx) => listMethod(ctx, pager, AccountAssociationsService.method.listAccountAssociations, req, "accountAssociations", {
      orderable: accountAssociationOrderable,
      ...nameFilter(req.name, { max: 128 }, (filter, page) => listAccountAssociations(db, filter, page)),
      map: accountAssociationFromRow,
    }),

    async createAccountAssociation(req, ctx) {
      const [association] = checkedCreate(AccountAssociationSchema, req.accountAssociation, req.parent, checkAccountAssociationFields);
      const time = now();
      const row = { uid: req.parent, group_uid: req.parent, create_time: time, ...accountAssociationColumns(association, time) };
      return inTransaction(db, ctx.signal, async (trx) => {
        await insertAccountAssociation(trx, row);
        return accountAssociationFromRow(row);
      });
    },

    async updateAccountAssociation(req, ctx) {
      const patch = checkedPatch(AccountAssociationSchema, req.accountAssociation, "account_association");
      return inTransaction(db, ctx.signal, async (trx) => {
        const current = accountAssociationFromRow(await getAccountAssociation(trx, patch.uid));
        const [next] = checkedUpdate(AccountAssociationSchema, current, patch, req.updateMask, ACCOUNT_ASSOCIATION_UPDATABLE, checkAccountAssociationFields);
        return accountAssociationFromRow(await updateAccountAssociation(trx, next.uid, accountAssociationColumns(next, now())));
      });
    },

    deleteAccountAssociation: (req, ctx) => idempotentDeleteMethod(db, ctx, req.uid, deleteAccountAssociation),
  };
}
