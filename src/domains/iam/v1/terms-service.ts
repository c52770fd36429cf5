import { create } from "@bufbuild/protobuf";
import type { ServiceImpl } from "@connectrpc/connect";
import { Terms, TermsDocumentStatusSchema, TermsListSchema } from "../../../../gen/platform/iam/v1/terms_pb.js";
import { TermsService } from "../../../../gen/platform/iam/v2/terms_service_pb.js";
import { callV2, listAll } from "../../../aip/v1/index.js";

const v2 = TermsService.method;

/** Terms v1 (`/iam/v1/terms`): each call is the v2 TermsService call it maps onto. */
export function createTermsV1Service(terms: ServiceImpl<typeof TermsService>): ServiceImpl<typeof Terms> {
  return {
    acceptTerms: async (req, ctx) => {
      const answer = await callV2(v2.acceptTerms, terms.acceptTerms, { group: req.group, documentIds: req.documentIds }, ctx);
      return { group: answer.group, documentIds: answer.documentIds };
    },

    listAccepted: async (req, ctx) => {
      const items = await listAll({ id: "" }, async (_uidp, page) => {
        const answer = await callV2(v2.listTermsAcceptances, terms.listTermsAcceptances, { group: req.group, ...page }, ctx);
        return { items: answer.termsAcceptances, nextPageToken: answer.nextPageToken };
      });
      return create(TermsListSchema, {
        items: items.map((a) => create(TermsDocumentStatusSchema, { docId: a.docId, acceptedBy: a.acceptedBy, acceptedAt: a.createTime })),
      });
    },
  };
}
