import { randomBytes } from "node:crypto";
import type { DescFile, DescService } from "@bufbuild/protobuf";
import type { ConnectRouter, Interceptor } from "@connectrpc/connect";
import { AccountAssociationsService, file_platform_iam_v2_account_associations_service } from "../gen/platform/iam/v2/account_associations_service_pb.js";
import {
  ExternalGroupRoleMappingsService,
  file_platform_iam_v2_external_group_role_mappings_service,
} from "../gen/platform/iam/v2/external_group_role_mappings_service_pb.js";
import { file_platform_iam_v2_group_invites_service, GroupInvitesService } from "../gen/platform/iam/v2/group_invites_service_pb.js";
import { file_platform_iam_v2_groups_service, GroupsService } from "../gen/platform/iam/v2/groups_service_pb.js";
import { file_platform_iam_v2_identities_service, IdentitiesService } from "../gen/platform/iam/v2/identities_service_pb.js";
import { file_platform_iam_v2_identity_providers_service, IdentityProvidersService } from "../gen/platform/iam/v2/identity_providers_service_pb.js";
import { file_platform_iam_v2_role_bindings_service, RoleBindingsService } from "../gen/platform/iam/v2/role_bindings_service_pb.js";
import { file_platform_iam_v2_roles_service, RolesService } from "../gen/platform/iam/v2/roles_service_pb.js";
import { file_platform_iam_v2_terms_service, TermsService } from "../gen/platform/iam/v2/terms_service_pb.js";
import { file_platform_ping_v2_ping, PingService } from "../gen/platform/ping/v2/ping_pb.js";
import { file_platform_registry_v2_images_service, ImagesService } from "../gen/platform/registry/v2/images_service_pb.js";
import { file_platform_registry_v2_repos_service, ReposService } from "../gen/platform/registry/v2/repos_service_pb.js";
import { file_platform_registry_v2_tags_service, TagsService } from "../gen/platform/registry/v2/tags_service_pb.js";
import { errorDomainOf } from "./api/errors.js";
import { createPager } from "./api/pagination.js";
import { createTokenService, type TokenService } from "./auth/tokens.js";
import { prepareStore } from "./bootstrap.js";
import type { ServerConfig } from "./config.js";
import { authenticationInterceptor } from "./interceptors/authentication-interceptor.js";
import { authorizationInterceptor } from "./interceptors/authorization-interceptor.js";
import { deadlineInterceptor } from "./interceptors/deadline-interceptor.js";
import { errorInterceptor } from "./interceptors/error-interceptor.js";
import { loggingInterceptor } from "./interceptors/logging-interceptor.js";
import { createStreamShutdown } from "./interceptors/shutdown-interceptor.js";
import type { Logger } from "./logger.js";
import type { ServiceDeps } from "./services/deps.js";
import { createAccountAssociationsService } from "./services/iam/account-association-service.js";
import { createExternalGroupRoleMappingsService } from "./services/iam/external-group-role-mapping-service.js";
import { createGroupInvitesService } from "./services/iam/group-invite-service.js";
import { createGroupsService } from "./services/iam/groups-service.js";
import { createIdentityProvidersService } from "./services/iam/identity-provider-service.js";
import { createIdentitiesService } from "./services/iam/identity-service.js";
import { createRoleBindingsService } from "./services/iam/role-binding-service.js";
import { createRolesService } from "./services/iam/role-service.js";
import { createTermsService } from "./services/iam/terms-service.js";
import { createPingService } from "./services/ping/ping-service.js";
import { createImagesService } from "./services/registry/images-service.js";
import { createReposService } from "./services/registry/repos-service.js";
import { createTagsService } from "./services/registry/tags-service.js";
import { registerHealth, type HealthControl } from "./services/system/health-service.js";
import { registerReflection } from "./services/system/reflection-service.js";
import { serverSecret } from "./store/repositories/server-keys.js";
import type { Store } from "./store/store.js";

/** The proto files whose services the API host serves: published by reflection, transcoded to REST. */
/** IAM identities, roles and role bindings. */
const IAM_CORE_FILES: DescFile[] = [file_platform_iam_v2_identities_service, file_platform_iam_v2_roles_service, file_platform_iam_v2_role_bindings_service];
/** IAM providers, associations, invites, mappings and terms. */
const IAM_EXTRA_FILES: DescFile[] = [
  file_platform_iam_v2_identity_providers_service,
  file_platform_iam_v2_account_associations_service,
  file_platform_iam_v2_group_invites_service,
  file_platform_iam_v2_external_group_role_mappings_service,
  file_platform_iam_v2_terms_service,
];
/** Registry repos, tags and images. */
const REGISTRY_FILES: DescFile[] = [file_platform_registry_v2_repos_service, file_platform_registry_v2_tags_service, file_platform_registry_v2_images_service];
export const API_FILES: DescFile[] = [file_platform_ping_v2_ping, file_platform_iam_v2_groups_service, ...IAM_CORE_FILES, ...IAM_EXTRA_FILES, ...REGISTRY_FILES];
export const API_SERVICES: DescService[] = API_FILES.flatMap((f) => f.services);

/** The RPC side of the API host, independent of any listener (in-process tests use it directly). */
export interface ApiHost {
  /** Registers every service on a router. */
  routes(router: ConnectRouter): void;
  /** The interceptor chain, outermost first. */
  interceptors: Interceptor[];
  services: DescService[];
  files: DescFile[];
  tokens: TokenService;
  /** Reports NOT_SERVING on gRPC health from now on (shutdown). */
  setServing(serving: boolean): void;
  /** Ends streaming calls (shutdown); unary calls are unaffected. */
  endStreams(): void;
}

export async function createApiHost(store: Store, config: ServerConfig, logger: Logger): Promise<ApiHost> {
  const now = Date.now;
  await prepareStore(store, now());
  const tokens = await createTokenService(store.db, config.apiUrl, now);
  const pageSecret = await serverSecret(store.db, "page-token-key", () => randomBytes(32).toString("base64url"), now());
  const deps: ServiceDeps = {
    db: store.db,
    pager: createPager({ secret: Buffer.from(pageSecret, "base64url"), now }),
    tokens,
    now,
    organizationCreation: config.organizationCreation ?? "bootstrap",
  };
  const health: HealthControl[] = [];
  const streams = createStreamShutdown();
  let serving = true;

  return {
    files: API_FILES,
    services: API_SERVICES,
    tokens,
    endStreams: streams.endStreams,
    interceptors: [
      streams.interceptor,
      loggingInterceptor(logger),
      errorInterceptor(logger, errorDomainOf(config)),
      deadlineInterceptor(config.limits.requestTimeoutMs),
      authenticationInterceptor(tokens, store.db, config.apiUrl),
      authorizationInterceptor(),
    ],
    routes(router) {
      router.service(PingService, createPingService());
      router.service(GroupsService, createGroupsService(deps));
      router.service(IdentitiesService, createIdentitiesService(deps));
      router.service(RolesService, createRolesService(deps));
      router.service(RoleBindingsService, createRoleBindingsService(deps));
      router.service(IdentityProvidersService, createIdentityProvidersService(deps));
      router.service(AccountAssociationsService, createAccountAssociationsService(deps));
      router.service(GroupInvitesService, createGroupInvitesService(deps));
      router.service(ExternalGroupRoleMappingsService, createExternalGroupRoleMappingsService(deps));
      router.service(TermsService, createTermsService(deps));
      router.service(ReposService, createReposService(deps));
      router.service(TagsService, createTagsService(deps));
      router.service(ImagesService, createImagesService(deps));
      registerReflection(router, API_FILES);
      const control = registerHealth(router, {
        services: API_SERVICES.map((s) => s.typeName),
        check: () => store.db.selectFrom("server_secrets").select("name").limit(1).execute().then(() => true),
      });
      control.setServing(serving);
      health.push(control);
    },
    setServing(value) {
      serving = value;
      for (const control of health) control.setServing(value);
    },
  };
}
