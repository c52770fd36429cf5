import { create } from "@bufbuild/protobuf";
import { EmptySchema } from "@bufbuild/protobuf/wkt";
import type { ServiceImpl } from "@connectrpc/connect";
import { AccountAssociationSchema } from "../../../gen/platform/iam/v2/account_association_pb.js";
import {
  AccountAssociationsService,
  ListAccountAssociationsRequestSchema,
  ListAccountAssociationsResponseSchema,
} from "../../../gen/platform/iam/v2/account_associations_service_pb.js";
import { applyFieldMask } from "../../api/field-mask.js";
import { readPage } from "../../api/list.js";
import { Violations } from "../../api/validation.js";
import { visibilityKey } from "../../auth/principal.js";
import {
  accountAssociationOrderable,
  deleteAccountAssociation,
  getAccountAssociation,
  insertAccountAssociation,
  listAccountAssociations,
  updateAccountAssociation,
} from "./store/account-associations.js";
import { inTransaction } from "../../store/transaction.js";
import type { ServiceDeps } from "../deps.js";
import {
  ACCOUNT_ASSOCIATION_UPDATABLE,
  accountAssociationColumns,
  accountAssociationFromRow,
  checkAccountAssociationFields,
} from "./account-association-fields.js";

/** AccountAssociationsService: one association per group, whose uid is the group's uid. */
export function createAccountAssociationsService({ db, pager, now }: ServiceDeps): ServiceImpl<typeof AccountAssociationsService> {
  return {
    async getAccountAssociation(req) {
      new Violations().uid("uid", req.uid).throwIfAny();
      return accountAssociationFromRow(await getAccountAssociation(db, req.uid));
    },

    async listAccountAssociations(req, ctx) {
      const page = await readPage({
        pager,
        schema: ListAccountAssociationsRequestSchema,
        request: req,
        orderable: accountAssociationOrderable,
        validate: (v) => v.text("name", req.name, { max: 128 }),
        read: (p, uidp) => listAccountAssociations(db, { name: req.name || undefined, uidp, visible: ctx.values.get(visibilityKey) }, p),
        map: accountAssociationFromRow,
      });
      return create(ListAccountAssociationsResponseSchema, { accountAssociations: page.items, ...page });
    },

    async createAccountAssociation(req, ctx) {
      const association = req.accountAssociation ?? create(AccountAssociationSchema);
      const violations = new Violations().uid("parent", req.parent);
      checkAccountAssociationFields(violations, association);
      violations.throwIfAny();
      const time = now();
      const row = { uid: req.parent, group_uid: req.parent, create_time: time, ...accountAssociationColumns(association, time) };
      await inTransaction(db, ctx.signal, (trx) => insertAccountAssociation(trx, row));
      return accountAssociationFromRow(row);
    },

    async updateAccountAssociation(req, ctx) {
      const patch = req.accountAssociation ?? create(AccountAssociationSchema);
      new Violations().uid("account_association.uid", patch.uid).throwIfAny();
      const row = await inTransaction(db, ctx.signal, async (trx) => {
        const current = accountAssociationFromRow(await getAccountAssociation(trx, patch.uid));
        const next = applyFieldMask(AccountAssociationSchema, current, patch, req.updateMask, ACCOUNT_ASSOCIATION_UPDATABLE);
        const violations = new Violations();
        checkAccountAssociationFields(violations, next);
        violations.throwIfAny();
        return updateAccountAssociation(trx, next.uid, accountAssociationColumns(next, now()));
      });
      return accountAssociationFromRow(row);
    },

    async deleteAccountAssociation(req, ctx) {
      new Violations().uid("uid", req.uid).throwIfAny();
      await inTransaction(db, ctx.signal, (trx) => deleteAccountAssociation(trx, req.uid));
      return create(EmptySchema);
    },
  };
}
