/**
 * The IAM domain's face: what other folders may use of it. Everything else under
 * `src/domains/iam/` is private to the domain.
 */
export { ORGANIZATION_NAME } from "./group-validation.js";
export { findOrganizationByName, getGroup, type GroupRow } from "./store/groups.js";
export { grantsOf } from "./store/role-bindings.js";
