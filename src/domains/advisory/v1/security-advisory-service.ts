import { create } from "@bufbuild/protobuf";
import type { ServiceImpl } from "@connectrpc/connect";
import {
  DocumentListSchema,
  ResolvedVulnsReportListSchema,
  SecurityAdvisory,
  VulnerabilityMetadataListSchema,
} from "../../../../gen/platform/advisory/v1/advisory_pb.js";
import { ImageRefSchema, SecurityAdvisoryService } from "../../../../gen/platform/advisory/v2/security_advisory_service_pb.js";
import { callV2, listAll } from "../../../aip/v1/index.js";
import { documentToV1, metadataToV1, resolvedVulnsReportToV1 } from "./advisory-mapper.js";

const v2 = SecurityAdvisoryService.method;

/**
 * SecurityAdvisory v1 (`/advisory/v1/`): each List reads every page of the v2 List it maps onto
 * (spec 9.3: the full set, no paging or total; what is missing is an empty list) and answers it in
 * v1 shapes. Validation, authorization and visibility are the v2 calls'.
 */
export function createSecurityAdvisoryV1Service(advisory: ServiceImpl<typeof SecurityAdvisoryService>): ServiceImpl<typeof SecurityAdvisory> {
  return {
    async listDocuments(req, ctx) {
      // `id` is an artifact name, not a uid: it is v2's filter, not listAll's.
      const items = await listAll({ id: "" }, async (_uidp, page) => {
        const answer = await callV2(v2.listDocuments, advisory.listDocuments, { id: req.id, cves: req.cves, artifactNames: req.artifactNames, ids: req.ids, ...page }, ctx);
        return { items: answer.documents, nextPageToken: answer.nextPageToken };
      });
      return create(DocumentListSchema, { items: items.map(documentToV1) });
    },

    async listVulnerabilityMetadata(req, ctx) {
      const items = await listAll({ id: "" }, async (_uidp, page) => {
        const answer = await callV2(v2.listVulnerabilityMetadata, advisory.listVulnerabilityMetadata, { id: req.id, ids: req.ids, ...page }, ctx);
        return { items: answer.vulnerabilityMetadata, nextPageToken: answer.nextPageToken };
      });
      return create(VulnerabilityMetadataListSchema, { items: items.map(metadataToV1) });
    },

    async listResolvedVulnsReports(req, ctx) {
      const imageRefs = req.imageRefs.map((r) => create(ImageRefSchema, { repo: r.repo, tags: r.tags }));
      const items = await listAll(req, async (uidp, page) => {
        const answer = await callV2(
          v2.listResolvedVulnsReports,
          advisory.listResolvedVulnsReports,
          { imageRefs, startTime: req.startTime, endTime: req.endTime, uidp, ...page },
          ctx,
        );
        return { items: answer.resolvedVulnsReports, nextPageToken: answer.nextPageToken };
      });
      return create(ResolvedVulnsReportListSchema, { items: items.map(resolvedVulnsReportToV1) });
    },
  };
}
