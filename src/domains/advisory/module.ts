import { file_platform_advisory_v2_security_advisory_service, SecurityAdvisoryService } from "../../../gen/platform/advisory/v2/security_advisory_service_pb.js";
import { bind, type Domain } from "../domain.js";
import { createSecurityAdvisoryService } from "./security-advisory-service.js";

/**
 * Advisory (`platform.advisory.v2`): the imported OSV records published without a credential, as
 * documents per artifact and metadata per record. It reads the vulnerabilities domain's tables.
 */
export const advisory: Domain = {
  name: "advisory",
  files: [file_platform_advisory_v2_security_advisory_service],
  services: [bind(SecurityAdvisoryService, createSecurityAdvisoryService)],
  migrations: {},
  ownedByGroup: [],
  deletedWithRepo: [],
};
