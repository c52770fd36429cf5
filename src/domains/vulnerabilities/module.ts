import { AdvisoriesService, file_platform_vulnerabilities_v2_advisories_service } from "../../../gen/platform/vulnerabilities/v2/advisories_service_pb.js";
import { Advisories, file_platform_vulnerabilities_v1_advisory } from "../../../gen/platform/vulnerabilities/v1/advisory_pb.js";
import { bind, type Domain } from "../kit/domain.js";
import { vulnerabilitiesJobs, type VulnerabilitiesJobSettings } from "./jobs.js";
import { vulnerabilitiesCommands } from "./commands.js";
import { createAdvisoriesService } from "./advisories-service.js";
import { createAdvisoriesV1Service } from "./v1/advisories-service.js";
import { vulnerabilitiesMigrations } from "./migrations.js";

/**
 * Vulnerabilities (`platform.vulnerabilities.v2`, and `platform.vulnerabilities.v1` over it): advisories, one per (OSV record, affected
 * package), loaded with `platform-api advisories import` and kept current from feeds (`serve --advisory-feed`, the `advisory-feeds` worker). Its tables also hold the OSV records that
 * the advisory domain serves as documents and metadata.
 */
export const vulnerabilities: Domain<VulnerabilitiesJobSettings> = {
  name: "vulnerabilities",
  files: [file_platform_vulnerabilities_v2_advisories_service, file_platform_vulnerabilities_v1_advisory],
  services: [
    bind(AdvisoriesService, createAdvisoriesService),
    // v1 (`platform.vulnerabilities.v1`): over the v2 service (docs/decisions.md, "v1").
    bind(Advisories, (deps) => createAdvisoriesV1Service(createAdvisoriesService(deps))),
  ],
  migrations: vulnerabilitiesMigrations,
  ownedByGroup: [],
  deletedWithRepo: [],
  commands: vulnerabilitiesCommands,
  jobs: vulnerabilitiesJobs,
};
