/**
 * The IAM domain's face: what the rest of the server may use of it (authentication reads
 * identities and grants, bootstrap writes the first organization, the registry host names
 * organizations and accepts pull tokens). Everything else under `src/domains/iam/` is private to the domain.
 */
export { checkGroupFields, ORGANIZATION_NAME } from "./group-validation.js";
export { findOrganizationByName, getGroup, insertGroup, isOrganization, organizations, type GroupRow } from "./store/groups.js";
export { getIdentity, insertIdentity, touchLastSeen, type StoredClaimMatch, type StoredStaticKeys } from "./store/identities.js";
export { readClaimMatch, readStaticKeys, StoredJsonError } from "./store/identity-json.js";
export { bindRole, grantsOf } from "./store/role-bindings.js";
export { syncBuiltInRoles, type BuiltInRole } from "./store/roles.js";
export { acceptPullToken, pullTokenLive, type AcceptedPullToken } from "./pull-token-passwords.js";
export {
  bindingsOfIdentity,
  loginProviderOf,
  organizationPersonUid,
  ownersOf,
  personOf,
  redeemInvite,
  redeemInviteOnce,
  refreshOrganizationPerson,
  registerForOrganization,
  signInServerWide,
  signInToOrganization,
  type HeldBinding,
  type LoginProvider,
  type Person,
  type Redemption,
} from "./people.js";
export { createGrantsCache, GRANTS_MAX_AGE_MS, type GrantsCache } from "./grants-cache.js";
