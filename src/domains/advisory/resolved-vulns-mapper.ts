import { create } from "@bufbuild/protobuf";
import { ResolvedVulnSchema, ResolvedVulnsReportSchema, type ResolvedVulnsReport } from "../../../gen/platform/advisory/v2/security_advisory_service_pb.js";
import type { OsvSeverity } from "../../engines/advisories/osv/record.js";
import { toTimestamp } from "../../aip/time.js";
import type { ResolvedVulnRow, ResolvedVulnsReportRow } from "../registry/index.js";
import { severityViews } from "../vulnerabilities/index.js";

export function resolvedVulnsReportFromRow(row: ResolvedVulnsReportRow & { repo_name: string; resolved: ResolvedVulnRow[] }): ResolvedVulnsReport {
  return create(ResolvedVulnsReportSchema, {
    date: toTimestamp(row.day),
    resolvedVulns: row.resolved.map((v) =>
      create(ResolvedVulnSchema, {
        id: v.advisory_id,
        aliases: JSON.parse(v.aliases) as string[],
        cvssSeverities: severityViews(JSON.parse(v.severities) as OsvSeverity[]),
        package: v.purl,
      }),
    ),
    uid: row.uid,
    repo: row.repo_uid,
    repoName: row.repo_name,
    tag: row.tag_name,
    fromDigest: row.from_digest,
    toDigest: row.to_digest,
  });
}
