import { create } from "@bufbuild/protobuf";
import type { ServiceImpl } from "@connectrpc/connect";
import { AcceptTermsResponseSchema, TermsService } from "../../../gen/platform/iam/v2/terms_service_pb.js";
import { unauthenticated } from "../../aip/errors.js";
import { listMethod } from "../kit/standard-methods.js";
import { Violations } from "../../aip/validation.js";
import { principalKey } from "../../access/principal.js";
import { getGroup } from "./store/groups.js";
import { acceptTerms, listTermsAcceptances, termsAcceptanceOrderable } from "./store/terms.js";
import { inTransaction } from "../../store/transaction.js";
import type { ServiceDeps } from "../kit/deps.js";
import { termsAcceptanceFromRow } from "./terms-mapper.js";
import { checkDocumentIds, DOC_ID } from "./terms-validation.js";

/** TermsService: acceptances of terms documents, which apply to a group and everything below it. */
export function createTermsService({ db, pager, now }: ServiceDeps): ServiceImpl<typeof TermsService> {
  return {
    async acceptTerms(req, ctx) {
      const caller = ctx.values.get(principalKey);
      if (!caller) throw unauthenticated("accepting terms needs `Authorization: Bearer <token>`");
      const docs = req.documentIds;
      const violations = new Violations().uid("group", req.group);
      checkDocumentIds(violations, docs);
      violations.throwIfAny();
      return inTransaction(db, ctx.signal, async (trx) => {
        const rows = await acceptTerms(trx, req.group, docs, caller.identityUid, now());
        return create(AcceptTermsResponseSchema, { group: req.group, documentIds: docs, termsAcceptances: rows.map(termsAcceptanceFromRow) });
      });
    },

    listTermsAcceptances: (req, ctx) => listMethod(ctx, pager, TermsService.method.listTermsAcceptances, req, "termsAcceptances", {
      orderable: termsAcceptanceOrderable,
      validate: (v) => {
        v.uid("group", req.group);
        v.text("doc_id", req.docId, { max: 128, pattern: DOC_ID });
      },
      // Acceptances at the group and its ancestors: no uidp filter, no visibility narrowing.
      read: async (page) => {
        await getGroup(db, req.group);
        return listTermsAcceptances(db, { groupUid: req.group, docId: req.docId || undefined }, page);
      },
      map: termsAcceptanceFromRow,
    }),
  };
}
