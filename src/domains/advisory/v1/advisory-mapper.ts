import { create } from "@bufbuild/protobuf";
import {
  DocumentAdvisorySchema as V1DocumentAdvisorySchema,
  DocumentEventSchema as V1DocumentEventSchema,
  DocumentSchema as V1DocumentSchema,
  ReferenceSchema as V1ReferenceSchema,
  ResolvedVulnSchema as V1ResolvedVulnSchema,
  ResolvedVulnsReportSchema as V1ResolvedVulnsReportSchema,
  SeveritySchema as V1SeveritySchema,
  VulnerabilityMetadataSchema as V1VulnerabilityMetadataSchema,
  type Document as V1Document,
  type DocumentEvent as V1DocumentEvent,
  type ResolvedVulnsReport as V1ResolvedVulnsReport,
  type Severity as V1Severity,
  type VulnerabilityMetadata as V1VulnerabilityMetadata,
} from "../../../../gen/platform/advisory/v1/advisory_pb.js";
import type { Document, DocumentEvent } from "../../../../gen/platform/advisory/v2/document_pb.js";
import type { ResolvedVulnsReport } from "../../../../gen/platform/advisory/v2/security_advisory_service_pb.js";
import type { Severity, VulnerabilityMetadata } from "../../../../gen/platform/advisory/v2/vulnerability_metadata_pb.js";

/** A v2 severity in the v1 shape (the same fields, v1's message). */
function severityToV1(severity: Severity): V1Severity {
  return create(V1SeveritySchema, { type: severity.type, score: severity.score, baseScore: severity.baseScore, osvType: severity.osvType });
}

function eventToV1(event: DocumentEvent): V1DocumentEvent {
  return create(V1DocumentEventSchema, {
    timestamp: event.timestamp,
    rangeIndex: event.rangeIndex,
    rangeType: event.rangeType,
    repo: event.repo,
    event: event.event.case === undefined ? { case: undefined } : { case: event.event.case, value: event.event.value },
  });
}

/** A v2 document in the v1 shape: `withdrawn` is `withdrawn_at`. */
export function documentToV1(document: Document): V1Document {
  return create(V1DocumentSchema, {
    id: document.id,
    advisories: document.advisories.map((a) =>
      create(V1DocumentAdvisorySchema, {
        id: a.id,
        events: a.events.map(eventToV1),
        aliases: a.aliases,
        packageNamespace: a.packageNamespace,
        summary: a.summary,
        withdrawnAt: a.withdrawn,
      }),
    ),
  });
}

/** A v2 record description in the v1 shape: `published`, `modified`, `withdrawn` are `created_at`, `updated_at`, `withdrawn_at`. */
export function metadataToV1(metadata: VulnerabilityMetadata): V1VulnerabilityMetadata {
  return create(V1VulnerabilityMetadataSchema, {
    id: metadata.id,
    summary: metadata.summary,
    details: metadata.details,
    references: metadata.references.map((r) => create(V1ReferenceSchema, { type: r.type, url: r.url })),
    severities: metadata.severities.map(severityToV1),
    aliases: metadata.aliases,
    createdAt: metadata.published,
    updatedAt: metadata.modified,
    withdrawnAt: metadata.withdrawn,
  });
}

/** A v2 resolved-vulnerabilities report in the v1 shape: `uid` is `id`, `repo` is `repo_id`. */
export function resolvedVulnsReportToV1(report: ResolvedVulnsReport): V1ResolvedVulnsReport {
  return create(V1ResolvedVulnsReportSchema, {
    id: report.uid,
    date: report.date,
    repoId: report.repo,
    repoName: report.repoName,
    tag: report.tag,
    fromDigest: report.fromDigest,
    toDigest: report.toDigest,
    resolvedVulns: report.resolvedVulns.map((v) =>
      create(V1ResolvedVulnSchema, { id: v.id, aliases: v.aliases, cvssSeverities: v.cvssSeverities.map(severityToV1), package: v.package }),
    ),
  });
}
