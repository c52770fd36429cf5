import type { Migration } from "kysely";
import { registry as registryTables } from "./migrations/2026-11-22-0004-registry.js";
import { manifests } from "./migrations/2026-11-23-0005-manifests.js";
import { blobs } from "./migrations/2026-11-23-0006-blobs.js";
import { blobUseTime } from "./migrations/2026-11-24-0007-blob-use-time.js";
import { vulnerabilityReports } from "./migrations/2026-11-26-0040-vulnerability-reports.js";
import { tagForms } from "./migrations/2026-11-27-0110-tag-forms.js";
import { reportJobOrganization } from "./migrations/2026-11-28-0010-report-job-organization.js";
import { immutableTags } from "./migrations/2026-12-01-0010-immutable-tags.js";
import { retention } from "./migrations/2026-12-02-0010-retention.js";
import { tagPushTime } from "./migrations/2026-12-03-0010-tag-push-time.js";
import { retentionLeaseMoved } from "./migrations/2026-12-04-0020-retention-lease-moved.js";
import { supplyChainTrust } from "./migrations/2026-12-05-0480-supply-chain-trust.js";
import { reportPackageSource } from "./migrations/2026-12-06-0480-report-package-source.js";
import { upstreams } from "./migrations/2026-12-12-0010-upstreams.js";

/**
 * The registry domain's frozen migrations by name (its `Domain` value's `migrations`), imported by
 * the composition root's migration list without loading the domain's services.
 */
export const registryMigrations: Record<string, Migration> = {
  "2026-11-22-0004-registry": registryTables,
  "2026-11-23-0005-manifests": manifests,
  "2026-11-23-0006-blobs": blobs,
  "2026-11-24-0007-blob-use-time": blobUseTime,
  "2026-11-26-0040-vulnerability-reports": vulnerabilityReports,
  "2026-11-27-0110-tag-forms": tagForms,
  "2026-11-28-0010-report-job-organization": reportJobOrganization,
  "2026-12-01-0010-immutable-tags": immutableTags,
  "2026-12-02-0010-retention": retention,
  "2026-12-03-0010-tag-push-time": tagPushTime,
  "2026-12-04-0020-retention-lease-moved": retentionLeaseMoved,
  "2026-12-05-0480-supply-chain-trust": supplyChainTrust,
  "2026-12-06-0480-report-package-source": reportPackageSource,
  "2026-12-12-0010-upstreams": upstreams,
};
