import { create } from "@bufbuild/protobuf";
import {
  PlatformVulnReportSchema,
  VulnCountReportSchema,
  VulnCountsSchema,
  VulnReportSchema,
  VulnReportStatus,
  VulnSchema,
  type VulnCountReport,
  type VulnCounts,
  type VulnReport,
} from "../../../../gen/platform/registry/v1/registry_pb.js";
import {
  Vulnerability_Severity,
  VulnerabilityReport_Status,
  type SeverityCounts,
  type Vulnerability,
  type VulnerabilityReport,
} from "../../../../gen/platform/registry/v2/images_service_pb.js";
import type { Tag } from "../../../../gen/platform/registry/v2/tag_pb.js";
import { parentOf } from "../../../aip/uidp.js";

const STATUS: Record<VulnerabilityReport_Status, VulnReportStatus> = {
  [VulnerabilityReport_Status.UNSPECIFIED]: VulnReportStatus.UNSPECIFIED,
  [VulnerabilityReport_Status.PENDING]: VulnReportStatus.PENDING,
  [VulnerabilityReport_Status.DONE]: VulnReportStatus.DONE,
  [VulnerabilityReport_Status.FAILED]: VulnReportStatus.FAILED,
};

const SEVERITY: Record<Vulnerability_Severity, string> = {
  [Vulnerability_Severity.UNSPECIFIED]: "UNKNOWN",
  [Vulnerability_Severity.UNKNOWN]: "UNKNOWN",
  [Vulnerability_Severity.LOW]: "LOW",
  [Vulnerability_Severity.MEDIUM]: "MEDIUM",
  [Vulnerability_Severity.HIGH]: "HIGH",
  [Vulnerability_Severity.CRITICAL]: "CRITICAL",
};

function countsToV1(counts: SeverityCounts | undefined): VulnCounts {
  const { critical = 0, high = 0, medium = 0, low = 0, unknown = 0 } = counts ?? {};
  return create(VulnCountsSchema, { critical, high, medium, low, unknown, total: critical + high + medium + low + unknown });
}

function vulnToV1(v: Vulnerability) {
  return create(VulnSchema, {
    id: v.advisoryId,
    aliases: v.aliases,
    package: v.package,
    installedVersion: v.installedVersion,
    fixedVersion: v.fixedVersion,
    severity: SEVERITY[v.severity],
    score: v.score ?? 0,
    ecosystem: v.ecosystem,
  });
}

/** A v2 vulnerability report in the v1 shape: `update_time` is `updated_at`, severities are words. */
export function vulnReportToV1(report: VulnerabilityReport): VulnReport {
  return create(VulnReportSchema, {
    digest: report.digest,
    status: STATUS[report.status],
    reason: report.reason,
    vulns: report.vulnerabilities.map(vulnToV1),
    counts: countsToV1(report.counts),
    packageCount: report.packageCount,
    updatedAt: report.updateTime,
    platforms: report.platforms.map((p) =>
      create(PlatformVulnReportSchema, {
        digest: p.digest,
        arch: p.architecture,
        os: p.os,
        status: STATUS[p.status],
        reason: p.reason,
        vulns: p.vulnerabilities.map(vulnToV1),
        counts: countsToV1(p.counts),
        packageCount: p.packageCount,
        updatedAt: p.updateTime,
      }),
    ),
  });
}

/** The counts of the report of the image `tag` points to, as that tag's count report. */
export function vulnCountReportOf(tag: Tag, report: VulnerabilityReport): VulnCountReport {
  return create(VulnCountReportSchema, {
    id: tag.uid,
    repoId: parentOf(tag.uid) ?? "",
    tag: tag.name,
    digest: tag.digest,
    status: STATUS[report.status],
    counts: countsToV1(report.counts),
    packageCount: report.packageCount,
    updatedAt: report.updateTime,
  });
}
