import { file_platform_advisory_v2_security_advisory_service, SecurityAdvisoryService } from "../../../gen/platform/advisory/v2/security_advisory_service_pb.js";
import { file_platform_advisory_v1_advisory, SecurityAdvisory } from "../../../gen/platform/advisory/v1/advisory_pb.js";
import { bind, type Domain } from "../kit/domain.js";
import { createSecurityAdvisoryService } from "./security-advisory-service.js";
import { createSecurityAdvisoryV1Service } from "./v1/security-advisory-service.js";

/**
 * Advisory (`platform.advisory.v2`, and `platform.advisory.v1` over it): the imported OSV records published without a credential, as
 * documents per artifact and metadata per record. It reads the vulnerabilities domain's tables.
 */
export const advisory: Domain = {
  name: "advisory",
  files: [file_platform_advisory_v2_security_advisory_service, file_platform_advisory_v1_advisory],
  services: [
    bind(SecurityAdvisoryService, createSecurityAdvisoryService),
    // v1 (`platform.advisory.v1`): over the v2 service (docs/decisions.md, "v1").
    bind(SecurityAdvisory, (deps) => createSecurityAdvisoryV1Service(createSecurityAdvisoryService(deps))),
  ],
  migrations: {},
  ownedByGroup: [],
  deletedWithRepo: [],
};
