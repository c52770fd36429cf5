import { createClient, createRouterTransport, type Client } from "@connectrpc/connect";
import { AccountAssociationsService } from "../../gen/platform/iam/v2/account_associations_service_pb.js";
import { ExternalGroupRoleMappingsService } from "../../gen/platform/iam/v2/external_group_role_mappings_service_pb.js";
import { GroupInvitesService } from "../../gen/platform/iam/v2/group_invites_service_pb.js";
import { GroupsService } from "../../gen/platform/iam/v2/groups_service_pb.js";
import { IdentitiesService } from "../../gen/platform/iam/v2/identities_service_pb.js";
import { IdentityProvidersService } from "../../gen/platform/iam/v2/identity_providers_service_pb.js";
import { RoleBindingsService } from "../../gen/platform/iam/v2/role_bindings_service_pb.js";
import { RolesService } from "../../gen/platform/iam/v2/roles_service_pb.js";
import { TermsService } from "../../gen/platform/iam/v2/terms_service_pb.js";
import { ImagesService } from "../../gen/platform/registry/v2/images_service_pb.js";
import { ReposService } from "../../gen/platform/registry/v2/repos_service_pb.js";
import { TagsService } from "../../gen/platform/registry/v2/tags_service_pb.js";
import { newChildUid } from "../../src/aip/uidp.js";
import { createApiHost, type ApiHost } from "../../src/server/api-host.js";
import { builtInRole, type BuiltInRoleName } from "../../src/access/capabilities.js";
import { bootstrapOrganization } from "../../src/server/bootstrap.js";
import { defaultLimits, type OrganizationCreation } from "../../src/config.js";
import { createLogger } from "../../src/logger.js";
import { insertIdentity } from "../../src/domains/iam/store/identities.js";
import { bindRole } from "../../src/domains/iam/store/role-bindings.js";
import { openStore, type Store } from "../../src/server/open-store.js";

const API_URL = "http://api.test";

/** The API host's services and interceptors over an in-memory transport and an in-memory SQLite store. */
export interface InProcessApi {
  store: Store;
  host: ApiHost;
  org: string;
  ownerToken: string;
  groups: Client<typeof GroupsService>;
  identities: Client<typeof IdentitiesService>;
  roles: Client<typeof RolesService>;
  roleBindings: Client<typeof RoleBindingsService>;
  /** A token for an existing identity. */
  tokenFor(identityUid: string): Promise<string>;
  identityProviders: Client<typeof IdentityProvidersService>;
  accountAssociations: Client<typeof AccountAssociationsService>;
  groupInvites: Client<typeof GroupInvitesService>;
  externalGroupRoleMappings: Client<typeof ExternalGroupRoleMappingsService>;
  terms: Client<typeof TermsService>;
  repos: Client<typeof ReposService>;
  tags: Client<typeof TagsService>;
  images: Client<typeof ImagesService>;
  /** Call options carrying `token`. */
  as(token: string): { headers: Record<string, string> };
  /** An identity under `group` bound to a built-in role on `on`, and its token. */
  identityWith(group: string, role: BuiltInRoleName, on: string): Promise<string>;
  close(): Promise<void>;
}

export async function startInProcess(dbUrl = ":memory:", options: { organizationCreation?: OrganizationCreation } = {}): Promise<InProcessApi> {
  const store = await openStore(dbUrl);
  const config = { apiUrl: API_URL, registryUrl: "http://registry.test", organizationCreation: options.organizationCreation, logLevel: "silent" as const, limits: defaultLimits };
  const host = await createApiHost(store, config, createLogger("silent"));
  const transport = createRouterTransport(host.routes, { router: { interceptors: host.interceptors } });
  const { organization, identity } = await bootstrapOrganization(store, "acme", Date.now());
  const token = async (subject: string) => (await host.tokens.issue({ subject, audience: API_URL })).token;
  return {
    store,
    host,
    org: organization.uid,
    ownerToken: await token(identity.uid),
    groups: createClient(GroupsService, transport),
    identities: createClient(IdentitiesService, transport),
    roles: createClient(RolesService, transport),
    roleBindings: createClient(RoleBindingsService, transport),
    tokenFor: token,
    identityProviders: createClient(IdentityProvidersService, transport),
    accountAssociations: createClient(AccountAssociationsService, transport),
    groupInvites: createClient(GroupInvitesService, transport),
    externalGroupRoleMappings: createClient(ExternalGroupRoleMappingsService, transport),
    terms: createClient(TermsService, transport),
    repos: createClient(ReposService, transport),
    tags: createClient(TagsService, transport),
    images: createClient(ImagesService, transport),
    as: (t) => ({ headers: { authorization: `Bearer ${t}` } }),
    async identityWith(group, role, on) {
      const uid = newChildUid(group);
      const now = Date.now();
      await insertIdentity(store.db, { uid, group_uid: group, name: "someone", description: "", claim_match: "", static_keys: "", last_seen_time: null, create_time: now, update_time: now });
      await bindRole(store.db, on, uid, builtInRole(role).uid, now);
      return token(uid);
    },
    close: () => store.close(),
  };
}
