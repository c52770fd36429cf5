import { AccountAssociationsService, file_platform_iam_v2_account_associations_service } from "../../../gen/platform/iam/v2/account_associations_service_pb.js";
import {
  ExternalGroupRoleMappingsService,
  file_platform_iam_v2_external_group_role_mappings_service,
} from "../../../gen/platform/iam/v2/external_group_role_mappings_service_pb.js";
import { file_platform_iam_v2_group_invites_service, GroupInvitesService } from "../../../gen/platform/iam/v2/group_invites_service_pb.js";
import { file_platform_iam_v2_groups_service, GroupsService } from "../../../gen/platform/iam/v2/groups_service_pb.js";
import { file_platform_iam_v2_identities_service, IdentitiesService } from "../../../gen/platform/iam/v2/identities_service_pb.js";
import { file_platform_iam_v2_members_service, MembersService } from "../../../gen/platform/iam/v2/members_service_pb.js";
import { file_platform_iam_v2_pull_tokens_service, PullTokensService } from "../../../gen/platform/iam/v2/pull_tokens_service_pb.js";
import { file_platform_iam_v2_identity_providers_service, IdentityProvidersService } from "../../../gen/platform/iam/v2/identity_providers_service_pb.js";
import { file_platform_iam_v2_role_bindings_service, RoleBindingsService } from "../../../gen/platform/iam/v2/role_bindings_service_pb.js";
import { file_platform_iam_v2_roles_service, RolesService } from "../../../gen/platform/iam/v2/roles_service_pb.js";
import { file_platform_iam_v2_terms_service, TermsService } from "../../../gen/platform/iam/v2/terms_service_pb.js";
import { file_platform_iam_v1_account_associations, GroupAccountAssociations } from "../../../gen/platform/iam/v1/account_associations_pb.js";
import { ExternalGroupRoleMappings, file_platform_iam_v1_external_group_role_mappings } from "../../../gen/platform/iam/v1/external_group_role_mappings_pb.js";
import { file_platform_iam_v1_group, Groups } from "../../../gen/platform/iam/v1/group_pb.js";
import { file_platform_iam_v1_group_invites, GroupInvites } from "../../../gen/platform/iam/v1/group_invites_pb.js";
import { file_platform_iam_v1_identity_providers, IdentityProviders } from "../../../gen/platform/iam/v1/identity_providers_pb.js";
import { file_platform_iam_v1_terms, Terms } from "../../../gen/platform/iam/v1/terms_pb.js";
import { file_platform_iam_v1_identity, Identities } from "../../../gen/platform/iam/v1/identity_pb.js";
import { file_platform_iam_v1_role, Roles } from "../../../gen/platform/iam/v1/role_pb.js";
import { file_platform_iam_v1_role_binding, RoleBindings } from "../../../gen/platform/iam/v1/role_binding_pb.js";
import { bind, type Domain } from "../kit/domain.js";
import { createAccountAssociationsV1Service } from "./v1/account-associations-service.js";
import { createExternalGroupRoleMappingsV1Service } from "./v1/external-group-role-mappings-service.js";
import { createGroupInvitesV1Service } from "./v1/group-invites-service.js";
import { createGroupsV1Service } from "./v1/groups-service.js";
import { createIdentityProvidersV1Service } from "./v1/identity-providers-service.js";
import { createTermsV1Service } from "./v1/terms-service.js";
import { createIdentitiesV1Service } from "./v1/identities-service.js";
import { createRoleBindingsV1Service } from "./v1/role-bindings-service.js";
import { createRolesV1Service } from "./v1/roles-service.js";
import { createAccountAssociationsService } from "./account-association-service.js";
import { createExternalGroupRoleMappingsService } from "./external-group-role-mapping-service.js";
import { createGroupInvitesService } from "./group-invite-service.js";
import { createGroupsService } from "./groups-service.js";
import { createIdentityProvidersService } from "./identity-provider-service.js";
import { createIdentitiesService } from "./identity-service.js";
import { createMembersService } from "./members-service.js";
import { createRoleBindingsService } from "./role-binding-service.js";
import { createRolesService } from "./role-service.js";
import { createPullTokensService } from "./pull-token-service.js";
import { createTermsService } from "./terms-service.js";
import { iamMigrations } from "./migrations.js";

/**
 * IAM (`platform.iam.v2`, and `platform.iam.v1` over it): the group tree, identities, roles and role bindings, identity
 * providers, account associations, group invites, external group role mappings, terms; the members of a group (read only).
 * Its core tables (groups, identities, roles, bindings) are created under the store's first
 * migration's name (migrations/2026-11-22-0001-initial.ts), which the store's keys share.
 */
export const iam: Domain = {
  name: "iam",
  files: [
    file_platform_iam_v2_groups_service,
    file_platform_iam_v2_identities_service,
    file_platform_iam_v2_roles_service,
    file_platform_iam_v2_role_bindings_service,
    file_platform_iam_v2_identity_providers_service,
    file_platform_iam_v2_account_associations_service,
    file_platform_iam_v2_group_invites_service,
    file_platform_iam_v2_external_group_role_mappings_service,
    file_platform_iam_v2_terms_service,
    file_platform_iam_v2_pull_tokens_service,
    file_platform_iam_v2_members_service,
    file_platform_iam_v1_group,
    file_platform_iam_v1_identity,
    file_platform_iam_v1_role,
    file_platform_iam_v1_role_binding,
    file_platform_iam_v1_identity_providers,
    file_platform_iam_v1_account_associations,
    file_platform_iam_v1_group_invites,
    file_platform_iam_v1_external_group_role_mappings,
    file_platform_iam_v1_terms,
  ],
  services: [
    bind(GroupsService, createGroupsService),
    bind(IdentitiesService, createIdentitiesService),
    bind(RolesService, createRolesService),
    bind(RoleBindingsService, createRoleBindingsService),
    bind(IdentityProvidersService, createIdentityProvidersService),
    bind(AccountAssociationsService, createAccountAssociationsService),
    bind(GroupInvitesService, createGroupInvitesService),
    bind(ExternalGroupRoleMappingsService, createExternalGroupRoleMappingsService),
    bind(TermsService, createTermsService),
    bind(PullTokensService, createPullTokensService),
    bind(MembersService, createMembersService),
    // v1 (`platform.iam.v1`): each over its v2 service (docs/decisions.md, "v1").
    bind(Groups, (deps) => createGroupsV1Service(createGroupsService(deps))),
    bind(Identities, (deps) => createIdentitiesV1Service(createIdentitiesService(deps))),
    bind(Roles, (deps) => createRolesV1Service(createRolesService(deps))),
    bind(RoleBindings, (deps) => createRoleBindingsV1Service(createRoleBindingsService(deps))),
    bind(IdentityProviders, (deps) => createIdentityProvidersV1Service(createIdentityProvidersService(deps))),
    bind(GroupAccountAssociations, (deps) => createAccountAssociationsV1Service(createAccountAssociationsService(deps))),
    bind(GroupInvites, (deps) => createGroupInvitesV1Service(createGroupInvitesService(deps))),
    bind(ExternalGroupRoleMappings, (deps) => createExternalGroupRoleMappingsV1Service(createExternalGroupRoleMappingsService(deps))),
    bind(Terms, (deps) => createTermsV1Service(createTermsService(deps))),
  ],
  migrations: iamMigrations,
  ownedByGroup: [
    "identities",
    "roles",
    "role_bindings",
    "identity_providers",
    "account_associations",
    "group_invites",
    "external_group_role_mappings",
    "terms_acceptances",
  ],
  deletedWithRepo: [],
};
