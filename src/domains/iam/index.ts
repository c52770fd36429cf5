/**
 * The IAM domain's face: what the rest of the server may use of it (authentication reads
 * identities and grants, bootstrap writes the first organization). Everything else in this folder
 * is the domain's own.
 */
export { checkGroupFields } from "./group-validation.js";
export { findOrganizationByName, getGroup, insertGroup } from "./store/groups.js";
export { getIdentity, insertIdentity, touchLastSeen, type StoredClaimMatch, type StoredStaticKeys } from "./store/identities.js";
export { readClaimMatch, readStaticKeys, StoredJsonError } from "./store/identity-json.js";
export { bindRole, grantsOf } from "./store/role-bindings.js";
export { syncBuiltInRoles, type BuiltInRole } from "./store/roles.js";
