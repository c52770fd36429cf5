import { create } from "@bufbuild/protobuf";
import type { ServiceImpl } from "@connectrpc/connect";
import { AccountAssociationSchema } from "../../../gen/platform/iam/v2/account_association_pb.js";
import {
  AccountAssociationsService,
  ListAccountAssociationsRequestSchema,
  ListAccountAssociationsResponseSchema,
} from "../../../gen/platform/iam/v2/account_associations_service_pb.js";
import { applyFieldMask } from "../../aip/field-mask.js";
import { idempotentDeleteMethod, getMethod, listMethod } from "../kit/standard-methods.js";
import { Violations } from "../../aip/validation.js";
import {
  accountAssociationOrderable,
  deleteAccountAssociation,
  getAccountAssociation,
  insertAccountAssociation,
  listAccountAssociations,
  updateAccountAssociation,
} from "./store/account-associations.js";
import { inTransaction } from "../../store/transaction.js";
import type { ServiceDeps } from "../kit/deps.js";
import { accountAssociationColumns, accountAssociationFromRow } from "./account-association-mapper.js";
import { ACCOUNT_ASSOCIATION_UPDATABLE, checkAccountAssociationFields } from "./account-association-validation.js";

/** AccountAssociationsService: one association per group, whose uid is the group's uid. */
export function createAccountAssociationsService({ db, pager, now }: ServiceDeps): ServiceImpl<typeof AccountAssociationsService> {
  return {
    getAccountAssociation: (req) => getMethod(req.uid, (uid) => getAccountAssociation(db, uid), accountAssociationFromRow),

    listAccountAssociations: (req, ctx) =>
      listMethod(ctx, ListAccountAssociationsResponseSchema, "accountAssociations", {
        pager,
        schema: ListAccountAssociationsRequestSchema,
        request: req,
        orderable: accountAssociationOrderable,
        validate: (v) => v.text("name", req.name, { max: 128 }),
        read: (page, scope) => listAccountAssociations(db, { name: req.name || undefined, ...scope }, page),
        map: accountAssociationFromRow,
      }),

    async createAccountAssociation(req, ctx) {
      const association = req.accountAssociation ?? create(AccountAssociationSchema);
      const violations = new Violations().parent("parent", req.parent);
      checkAccountAssociationFields(violations, association);
      violations.throwIfAny();
      const time = now();
      const row = { uid: req.parent, group_uid: req.parent, create_time: time, ...accountAssociationColumns(association, time) };
      return inTransaction(db, ctx.signal, async (trx) => {
        await insertAccountAssociation(trx, row);
        return accountAssociationFromRow(row);
      });
    },

    async updateAccountAssociation(req, ctx) {
      const patch = req.accountAssociation ?? create(AccountAssociationSchema);
      new Violations().uid("account_association.uid", patch.uid).throwIfAny();
      return inTransaction(db, ctx.signal, async (trx) => {
        const current = accountAssociationFromRow(await getAccountAssociation(trx, patch.uid));
        const next = applyFieldMask(AccountAssociationSchema, current, patch, req.updateMask, ACCOUNT_ASSOCIATION_UPDATABLE);
        const violations = new Violations();
        checkAccountAssociationFields(violations, next);
        violations.throwIfAny();
        return accountAssociationFromRow(await updateAccountAssociation(trx, next.uid, accountAssociationColumns(next, now())));
      });
    },

    deleteAccountAssociation: (req, ctx) => idempotentDeleteMethod(db, ctx, req.uid, deleteAccountAssociation),
  };
}
