import { create } from "@bufbuild/protobuf";
import type { ServiceImpl } from "@connectrpc/connect";
import {
  ListDocumentsRequestSchema,
  ListDocumentsResponseSchema,
  ListVulnerabilityMetadataRequestSchema,
  ListVulnerabilityMetadataResponseSchema,
  SecurityAdvisoryService,
} from "../../../gen/platform/advisory/v2/security_advisory_service_pb.js";
import { readPage } from "../../aip/list.js";
import { listMethod } from "../kit/standard-methods.js";
import { listResolvedVulnsReports, resolvedVulnsOrderable } from "../registry/index.js";
import { resolvedVulnsReportFromRow } from "./resolved-vulns-mapper.js";
import { checkResolvedVulnsRequest, dayOf } from "./resolved-vulns-validation.js";
import type { ServiceDeps } from "../kit/deps.js";
import { checkArtifactNames, checkRecordNames } from "../vulnerabilities/index.js";
import { documentFromRow, metadataFromRow } from "./advisory-mappers.js";
import { documentOrderable, listDocuments, listRecords, metadataOrderable } from "../vulnerabilities/index.js";

/** A single-valued filter as a list (empty: no condition). */
const one = (value: string) => (value === "" ? [] : [value]);

/**
 * SecurityAdvisoryService: the imported OSV records as documents and metadata (public), and the
 * vulnerabilities tag moves resolved (narrowed to the repos the caller may pull from).
 */
export function createSecurityAdvisoryService({ db, pager }: ServiceDeps): ServiceImpl<typeof SecurityAdvisoryService> {
  return {
    async listDocuments(req) {
      const page = await readPage({
        pager,
        schema: ListDocumentsRequestSchema,
        request: req,
        orderable: documentOrderable,
        validate: (v) => {
          checkArtifactNames(v, "id", one(req.id));
          checkArtifactNames(v, "artifact_names", req.artifactNames);
          checkRecordNames(v, "cves", req.cves);
          checkRecordNames(v, "ids", req.ids);
        },
        read: (p) => listDocuments(db, { artifactNames: [one(req.id), req.artifactNames], recordNames: [req.cves, req.ids] }, p),
        map: documentFromRow,
      });
      return create(ListDocumentsResponseSchema, { documents: page.items, ...page });
    },

    async listVulnerabilityMetadata(req) {
      const page = await readPage({
        pager,
        schema: ListVulnerabilityMetadataRequestSchema,
        request: req,
        orderable: metadataOrderable,
        validate: (v) => {
          checkRecordNames(v, "id", one(req.id));
          checkRecordNames(v, "ids", req.ids);
        },
        read: (p) => listRecords(db, [one(req.id), req.ids], p),
        map: metadataFromRow,
      });
      return create(ListVulnerabilityMetadataResponseSchema, { vulnerabilityMetadata: page.items, ...page });
    },

    listResolvedVulnsReports: (req, ctx) => listMethod(ctx, pager, SecurityAdvisoryService.method.listResolvedVulnsReports, req, "resolvedVulnsReports", {
      orderable: resolvedVulnsOrderable,
      validate: (v) => checkResolvedVulnsRequest(v, req),
      read: (p, scope) =>
        listResolvedVulnsReports(
          db,
          {
            ...scope,
            startDay: req.startTime && dayOf(req.startTime),
            endDay: req.endTime && dayOf(req.endTime),
            refs: req.imageRefs.map((r) => ({ repoUid: r.repo, tags: r.tags })),
          },
          p,
        ),
      map: resolvedVulnsReportFromRow,
    }),
  };
}
