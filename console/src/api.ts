import { Code, ConnectError, createClient, type Interceptor } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-web";
import { Auth } from "../../gen/platform/auth/v1/auth_pb.js";
import { GroupInvitesService } from "../../gen/platform/iam/v2/group_invites_service_pb.js";
import { GroupsService } from "../../gen/platform/iam/v2/groups_service_pb.js";
import { ExternalGroupRoleMappingsService } from "../../gen/platform/iam/v2/external_group_role_mappings_service_pb.js";
import { IdentitiesService } from "../../gen/platform/iam/v2/identities_service_pb.js";
import { IdentityProvidersService } from "../../gen/platform/iam/v2/identity_providers_service_pb.js";
import { RoleBindingsService } from "../../gen/platform/iam/v2/role_bindings_service_pb.js";
import { RolesService } from "../../gen/platform/iam/v2/roles_service_pb.js";
import { SecurityAdvisoryService } from "../../gen/platform/advisory/v2/security_advisory_service_pb.js";
import { AdvisoriesService } from "../../gen/platform/vulnerabilities/v2/advisories_service_pb.js";
import { SubscriptionsService } from "../../gen/platform/events/v2/subscriptions_service_pb.js";
import { ArtifactsService } from "../../gen/platform/libraries/v2/artifacts_service_pb.js";
import { Registry as RegistryV1 } from "../../gen/platform/registry/v1/registry_pb.js";
import { ImagesService } from "../../gen/platform/registry/v2/images_service_pb.js";
import { ReposService } from "../../gen/platform/registry/v2/repos_service_pb.js";
import { TagsService } from "../../gen/platform/registry/v2/tags_service_pb.js";
import { accessToken } from "./auth.js";

/** Raised when the session has ended: the console returns to sign-in, on the same page. */
export class SessionEnded extends Error {}

/** Every call carries the session's token, renewed first when it is about to expire. */
const bearer: Interceptor = (next) => async (req) => {
  const token = await accessToken();
  if (!token) throw new SessionEnded("your session has ended");
  req.header.set("authorization", `Bearer ${token}`);
  try {
    return await next(req);
  } catch (error) {
    if (error instanceof ConnectError && error.code === Code.Unauthenticated) throw new SessionEnded(error.rawMessage);
    throw error;
  }
};

/** The API through its RPCs (Connect protocol, JSON), on this host: the same interceptors as every client. */
const transport = createConnectTransport({ baseUrl: location.origin, interceptors: [bearer] });

export const api = {
  auth: createClient(Auth, transport),
  groups: createClient(GroupsService, transport),
  identities: createClient(IdentitiesService, transport),
  identityProviders: createClient(IdentityProvidersService, transport),
  groupMappings: createClient(ExternalGroupRoleMappingsService, transport),
  roles: createClient(RolesService, transport),
  bindings: createClient(RoleBindingsService, transport),
  invites: createClient(GroupInvitesService, transport),
  advisories: createClient(AdvisoriesService, transport),
  /** Documents, metadata and the vulnerabilities tag moves resolved. */
  advisoryReports: createClient(SecurityAdvisoryService, transport),
  subscriptions: createClient(SubscriptionsService, transport),
  libraries: createClient(ArtifactsService, transport),
  repos: createClient(ReposService, transport),
  tags: createClient(TagsService, transport),
  images: createClient(ImagesService, transport),
  /** Tag history has its RPC in v1 (ListTagHistory); v2 serves it on the registry host only. */
  registryV1: createClient(RegistryV1, transport),
};

/** What to show of a refused call. */
export function messageOf(error: unknown): string {
  if (error instanceof ConnectError) return error.rawMessage;
  return error instanceof Error ? error.message : String(error);
}
