import { ArtifactsService, file_platform_libraries_v2_artifacts_service } from "../../../gen/platform/libraries/v2/artifacts_service_pb.js";
import { Artifacts, file_platform_libraries_v1_artifacts } from "../../../gen/platform/libraries/v1/artifacts_pb.js";
import { bind, type Domain } from "../kit/domain.js";
import { librariesCommands } from "./commands.js";
import { createArtifactsService } from "./artifacts-service.js";
import { createArtifactsV1Service } from "./v1/artifacts-service.js";
import { librariesMigrations } from "./migrations.js";

/**
 * Libraries (`platform.libraries.v2`, and `platform.libraries.v1` over it): each organization's index of language artifacts (npm,
 * PyPI, Maven) and their versions, loaded with `platform-api libraries import` from the
 * ecosystems' own metadata documents. A version's advisories come from the vulnerabilities domain.
 */
export const libraries: Domain = {
  name: "libraries",
  files: [file_platform_libraries_v2_artifacts_service, file_platform_libraries_v1_artifacts],
  services: [
    bind(ArtifactsService, createArtifactsService),
    // v1 (`platform.libraries.v1`): over the v2 service (docs/decisions.md, "v1").
    bind(Artifacts, (deps) => createArtifactsV1Service(createArtifactsService(deps))),
  ],
  migrations: librariesMigrations,
  ownedByGroup: ["artifacts"],
  deletedWithRepo: [],
  commands: librariesCommands,
};
