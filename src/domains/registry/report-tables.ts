/**
 * The tables of image vulnerability reports (docs/decisions.md, "Image vulnerability reports"):
 * reports, inventories and findings are per manifest digest, whatever repos hold it (a digest
 * names the same content everywhere); resolved-vulnerability reports are per repo, tag and day.
 * Column conventions in src/store/tables.ts.
 */

/**
 * Work owed to a digest: `inventory` (read its layers and SBOMs, then match) or `match` (match its
 * stored packages again, after an advisory import). One row per digest: enqueueing again bumps
 * `generation`, so a worker that finishes an older generation leaves the row to be done again.
 */
export interface ReportJobTable {
  digest: string;
  /** A repo holding the manifest: its blobs are read. */
  repo_uid: string;
  /** The root uid of `repo_uid` ("" when it names none, as a match's may not): the queue takes turns by it. */
  organization: string;
  kind: "inventory" | "match";
  generation: number;
  attempts: number;
  next_attempt_time: number;
  /** A worker holds the job until then (epoch ms); 0 when free. */
  lease_until: number;
  create_time: number;
}

/** The report of one image manifest (a platform's image, never an index). */
export interface ImageReportTable {
  digest: string;
  status: "pending" | "done" | "failed";
  /** Why it failed; "" otherwise. */
  reason: string;
  /** The purl `distro` qualifier of the image's os-release (`debian-12`); "" when none. */
  distro: string;
  /** Packages in the inventory. */
  packages: number;
  /** Where the packages came from: `layers`, or `attestation:<key name>` (a verified SBOM attestation); "" while pending. */
  package_source: string;
  critical: number;
  high: number;
  medium: number;
  low: number;
  unknown: number;
  create_time: number;
  update_time: number;
}

/** One package of an image's inventory; `name_key` (the name as its ecosystem compares names) is the index advisories find images by. */
export interface ImagePackageTable {
  digest: string;
  purl: string;
  /** OSV ecosystem, "" when the purl type maps to none. */
  ecosystem: string;
  name: string;
  name_key: string;
  version: string;
}

/** One advisory affecting one package of an image. */
export interface ReportFindingTable {
  digest: string;
  advisory_id: string;
  purl: string;
  /** JSON array of the advisory's aliases. */
  aliases: string;
  ecosystem: string;
  package_name: string;
  installed_version: string;
  /** "" when no fix is known. */
  fixed_version: string;
  severity: "CRITICAL" | "HIGH" | "MEDIUM" | "LOW" | "UNKNOWN";
  /** The highest CVSS base score times ten; null when none. */
  score_tenths: number | null;
  /** JSON array of the advisory's OSV severities ({type, score}). */
  severities: string;
}

/**
 * What the moves of one tag of a repo on one day (UTC) resolved: from the digest before the day's
 * first move to the digest after its last. `state` is `pending` until both digests' reports are
 * done. `uid` is a UIDP under the repo.
 */
export interface ResolvedVulnsReportTable {
  uid: string;
  repo_uid: string;
  tag_name: string;
  /** Midnight UTC of the day, epoch ms. */
  day: number;
  from_digest: string;
  to_digest: string;
  state: "pending" | "done";
  /** The day's last move, epoch ms. */
  move_time: number;
  update_time: number;
}

/** One vulnerability a resolved-vulnerability report lists. */
export interface ResolvedVulnTable {
  report_uid: string;
  repo_uid: string;
  advisory_id: string;
  purl: string;
  aliases: string;
  severities: string;
}

export interface ReportTables {
  report_jobs: ReportJobTable;
  image_reports: ImageReportTable;
  image_packages: ImagePackageTable;
  report_findings: ReportFindingTable;
  resolved_vulns_reports: ResolvedVulnsReportTable;
  resolved_vulns: ResolvedVulnTable;
}
