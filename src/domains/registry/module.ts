import { file_platform_registry_v1_registry, Registry } from "../../../gen/platform/registry/v1/registry_pb.js";
import { file_platform_registry_v2_images_service, ImagesService } from "../../../gen/platform/registry/v2/images_service_pb.js";
import { file_platform_registry_v2_repos_service, ReposService } from "../../../gen/platform/registry/v2/repos_service_pb.js";
import { file_platform_registry_v2_retention_policies_service, RetentionPoliciesService } from "../../../gen/platform/registry/v2/retention_policies_service_pb.js";
import { file_platform_registry_v2_tags_service, TagsService } from "../../../gen/platform/registry/v2/tags_service_pb.js";
import { bind, type Domain } from "../kit/domain.js";
import { registryCommands } from "./commands.js";
import { queueMatchesFor } from "./report-queue.js";
import { startReportWorker } from "./report-worker.js";
import { createImagesService } from "./images-service.js";
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
import { createReposService } from "./repos-service.js";
import { createRetentionPoliciesService } from "./retention-policies-service.js";
import { startRetentionWorker } from "./retention-worker.js";
import { createTagsService } from "./tags-service.js";
import { createRegistryV1Service } from "./v1/registry-service.js";

/**
 * Registry (`platform.registry.v2`, and `platform.registry.v1` over it): repos, tags with their
 * history, images, and v1's end-of-life tags and vulnerability reports. The OCI
 * Distribution host (`src/transport/oci/`) serves the same data on its own port.
 */
export const registry: Domain = {
  name: "registry",
  files: [file_platform_registry_v2_repos_service, file_platform_registry_v2_tags_service, file_platform_registry_v2_images_service, file_platform_registry_v2_retention_policies_service, file_platform_registry_v1_registry],
  services: [
    bind(ReposService, createReposService),
    bind(TagsService, createTagsService),
    bind(ImagesService, createImagesService),
    bind(RetentionPoliciesService, createRetentionPoliciesService),
    // v1 (`platform.registry.v1`): over the v2 services and the same repositories (docs/decisions.md, "v1").
    bind(Registry, createRegistryV1Service),
  ],
  migrations: {
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
  },
  ownedByGroup: ["repos", "retention_policies"],
  workers: {
    reports: ({ db, content, logger, events, scan }) =>
      startReportWorker({ db, content, logger, typePrefix: events.typePrefix, scan: { size: scan.threads, heapMb: scan.threadMemoryBytes / 1024 ** 2, cpuBudgetMs: scan.cpuBudgetMs } }),
    retention: ({ db, logger, events, retention: config }) => startRetentionWorker({ db, config, logger, typePrefix: events.typePrefix }),
  },
  deletedWithRepo: ["tag_history", "manifests", "manifest_refs", "repo_blobs", "uploads", "resolved_vulns_reports", "resolved_vulns", "retention_policies"],
  // Changed advisories: the images holding their packages are matched again.
  reactions: { advisoriesChanged: queueMatchesFor },
  commands: registryCommands,
};
