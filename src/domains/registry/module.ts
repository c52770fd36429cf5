import { file_platform_registry_v1_registry, Registry } from "../../../gen/platform/registry/v1/registry_pb.js";
import { file_platform_registry_v2_images_service, ImagesService } from "../../../gen/platform/registry/v2/images_service_pb.js";
import { file_platform_registry_v2_repos_service, ReposService } from "../../../gen/platform/registry/v2/repos_service_pb.js";
import { file_platform_registry_v2_retention_policies_service, RetentionPoliciesService } from "../../../gen/platform/registry/v2/retention_policies_service_pb.js";
import { file_platform_registry_v2_tags_service, TagsService } from "../../../gen/platform/registry/v2/tags_service_pb.js";
import { file_platform_registry_v2_upstreams_service, UpstreamsService } from "../../../gen/platform/registry/v2/upstreams_service_pb.js";
import { bind, type Domain } from "../kit/domain.js";
import { registryJobs, type RegistryJobSettings } from "./jobs.js";
import { registryCommands } from "./commands.js";
import { queueMatchesFor } from "./report-queue.js";
import { createImagesService } from "./images-service.js";
import { createReposService } from "./repos-service.js";
import { createRetentionPoliciesService } from "./retention-policies-service.js";
import { createTagsService } from "./tags-service.js";
import { file_platform_registry_v2_trust_service, TrustService } from "../../../gen/platform/registry/v2/trust_service_pb.js";
import { createTrustService } from "./trust/trust-service.js";
import { createUpstreamsService } from "./upstreams-service.js";
import { createRegistryV1Service } from "./v1/registry-service.js";
import { registryMigrations } from "./migrations.js";

/**
 * Registry (`platform.registry.v2`, and `platform.registry.v1` over it): repos, tags with their
 * history, images, and v1's end-of-life tags and vulnerability reports. The OCI
 * Distribution host (`src/transport/oci/`) serves the same data on its own port.
 */
export const registry: Domain<RegistryJobSettings> = {
  name: "registry",
  files: [file_platform_registry_v2_repos_service, file_platform_registry_v2_tags_service, file_platform_registry_v2_images_service, file_platform_registry_v2_retention_policies_service, file_platform_registry_v2_upstreams_service, file_platform_registry_v2_trust_service, file_platform_registry_v1_registry],
  services: [
    bind(ReposService, createReposService),
    bind(TagsService, createTagsService),
    bind(ImagesService, createImagesService),
    bind(RetentionPoliciesService, createRetentionPoliciesService),
    bind(UpstreamsService, createUpstreamsService),
    bind(TrustService, createTrustService),
    // v1 (`platform.registry.v1`): over the v2 services and the same repositories (docs/decisions.md, "v1").
    bind(Registry, createRegistryV1Service),
  ],
  migrations: registryMigrations,
  ownedByGroup: ["repos", "retention_policies", "upstreams", "trusted_keys"],
  jobs: registryJobs,
  deletedWithRepo: ["tag_history", "manifests", "manifest_refs", "repo_blobs", "uploads", "resolved_vulns_reports", "resolved_vulns", "retention_policies", "upstream_tag_checks", "signatures", "signature_verifications"],
  // Changed advisories: the images holding their packages are matched again.
  reactions: { advisoriesChanged: queueMatchesFor },
  commands: registryCommands,
};
