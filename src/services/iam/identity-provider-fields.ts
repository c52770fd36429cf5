import { create } from "@bufbuild/protobuf";
import type { Violations } from "../../api/validation.js";
import { IdentityProviderSchema, type IdentityProvider } from "../../../gen/platform/iam/v2/identity_provider_pb.js";
import type { IdentityProviderRow } from "../../store/repositories/identity-providers.js";
import { toTimestamp } from "../time.js";

/** The updatable fields (AIP-134 mask paths). */
export const IDENTITY_PROVIDER_UPDATABLE = [
  "name",
  "description",
  "issuer",
  "client_id",
  "client_secret",
  "additional_scopes",
  "groups_claim",
  "default_role_uid",
] as const;

/** An OAuth 2.0 scope token (RFC 6749 section 3.3). */
const SCOPE = /^[\x21\x23-\x5b\x5d-\x7e]+$/;
/** A JWT claim name: printable, no spaces. */
const CLAIM = /^[\x21-\x7e]+$/;

/** The API view; `withSecret` only for internal use while patching. */
export function identityProviderFromRow(row: IdentityProviderRow, withSecret = false): IdentityProvider {
  return create(IdentityProviderSchema, {
    uid: row.uid,
    name: row.name,
    description: row.description,
    issuer: row.issuer,
    clientId: row.client_id,
    clientSecret: withSecret ? row.client_secret : "",
    additionalScopes: JSON.parse(row.additional_scopes) as string[],
    groupsClaim: row.groups_claim,
    defaultRoleUid: row.default_role_uid,
    createTime: toTimestamp(row.create_time),
    updateTime: toTimestamp(row.update_time),
  });
}

/** Checks an https URL usable as an OIDC issuer. */
export function checkHttpsUrl(violations: Violations, field: string, value: string): void {
  if (value === "") {
    violations.add(field, "is required");
    return;
  }
  if (value.length > 2048) {
    violations.add(field, "must be at most 2048 characters");
    return;
  }
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    violations.add(field, "must be an https URL");
    return;
  }
  if (url.protocol !== "https:") violations.add(field, "must be an https URL");
  else if (url.username !== "" || url.password !== "" || url.search !== "" || url.hash !== "" || /[\s]/.test(value)) {
    violations.add(field, "must be an https URL without credentials, query or fragment");
  }
}

/** Checks the writable fields; `secretRequired` on create. */
export function checkIdentityProviderFields(violations: Violations, idp: IdentityProvider, secretRequired: boolean, prefix = "identity_provider."): void {
  violations.text(`${prefix}name`, idp.name, { required: true, max: 128 });
  violations.text(`${prefix}description`, idp.description, { max: 1024 });
  checkHttpsUrl(violations, `${prefix}issuer`, idp.issuer);
  violations.text(`${prefix}client_id`, idp.clientId, { required: true, max: 256 });
  violations.text(`${prefix}client_secret`, idp.clientSecret, { required: secretRequired, max: 1024 });
  if (idp.additionalScopes.length > 32) violations.add(`${prefix}additional_scopes`, "must hold at most 32 scopes");
  idp.additionalScopes.forEach((scope, i) =>
    violations.text(`${prefix}additional_scopes[${i}]`, scope, { required: true, max: 128, pattern: SCOPE }),
  );
  violations.text(`${prefix}groups_claim`, idp.groupsClaim, { max: 128, pattern: CLAIM });
  violations.uid(`${prefix}default_role_uid`, idp.defaultRoleUid, false);
}
