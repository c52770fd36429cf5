import { create } from "@bufbuild/protobuf";
import type { ServiceImpl } from "@connectrpc/connect";
import { TermsAcceptanceSchema, type TermsAcceptance } from "../../../gen/platform/iam/v2/terms_pb.js";
import { AcceptTermsResponseSchema, ListTermsAcceptancesRequestSchema, ListTermsAcceptancesResponseSchema, TermsService } from "../../../gen/platform/iam/v2/terms_service_pb.js";
import { unauthenticated } from "../../api/errors.js";
import { rootOf } from "../../api/uidp.js";
import { listMethod } from "../../api/standard-methods.js";
import { Violations } from "../../api/validation.js";
import { principalKey } from "../../auth/principal.js";
import { getGroup } from "./store/groups.js";
import { acceptTerms, listTermsAcceptances, termsAcceptanceOrderable, type TermsAcceptanceRow } from "./store/terms.js";
import { inTransaction } from "../../store/transaction.js";
import type { ServiceDeps } from "../deps.js";
import { toTimestamp } from "../../api/time.js";

/** A terms document id. */
const DOC_ID = /^[A-Za-z0-9][A-Za-z0-9._:/-]{0,127}$/;
const MAX_DOCS = 50;

export function termsAcceptanceFromRow(row: TermsAcceptanceRow): TermsAcceptance {
  return create(TermsAcceptanceSchema, {
    uid: row.uid,
    docId: row.doc_id,
    acceptedBy: row.accepted_by,
    groupUid: row.group_uid,
    orgUid: rootOf(row.group_uid),
    createTime: toTimestamp(row.create_time),
  });
}

/** TermsService: acceptances of terms documents, which apply to a group and everything below it. */
export function createTermsService({ db, pager, now }: ServiceDeps): ServiceImpl<typeof TermsService> {
  return {
    async acceptTerms(req, ctx) {
      const caller = ctx.values.get(principalKey);
      if (!caller) throw unauthenticated("accepting terms needs `Authorization: Bearer <token>`");
      const violations = new Violations().uid("group", req.group);
      const docs = req.documentIds;
      if (docs.length === 0) violations.add("document_ids", "is required");
      if (docs.length > MAX_DOCS) violations.add("document_ids", `must hold at most ${MAX_DOCS} ids`);
      docs.forEach((doc, i) => {
        violations.text(`document_ids[${i}]`, doc, { required: true, max: 128, pattern: DOC_ID });
        if (docs.indexOf(doc) !== i) violations.add(`document_ids[${i}]`, "repeats an earlier id");
      });
      violations.throwIfAny();
      const rows = await inTransaction(db, ctx.signal, (trx) => acceptTerms(trx, req.group, docs, caller.identityUid, now()));
      return create(AcceptTermsResponseSchema, { group: req.group, documentIds: docs, termsAcceptances: rows.map(termsAcceptanceFromRow) });
    },

    listTermsAcceptances: (req, ctx) =>
      listMethod(ctx, ListTermsAcceptancesResponseSchema, "termsAcceptances", {
        pager,
        schema: ListTermsAcceptancesRequestSchema,
        request: req,
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
