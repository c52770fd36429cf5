import type { IdentityProvider } from "../../../gen/platform/iam/v2/identity_provider_pb.js";
import type { Violations } from "../../aip/validation.js";
import { oidcOf } from "./identity-provider-mapper.js";
import { checkIssuerUrl } from "./issuer-validation.js";

/** The updatable top-level fields (AIP-134 mask paths; `oidc.*` reaches inside `oidc`). */
export const IDENTITY_PROVIDER_UPDATABLE = ["name", "description", "default_role", "oidc"] as const;

/** An OAuth 2.0 scope token (RFC 6749 section 3.3). */
const SCOPE = /^[\x21\x23-\x5b\x5d-\x7e]+$/;
/** A JWT claim name: printable, no spaces. */
const CLAIM = /^[\x21-\x7e]+$/;

/**
 * Checks the writable fields. A client secret is required unless the client is public
 * (`pkce_enabled`) or one is kept from before (`secretKept`, an update that gives none).
 */
export function checkIdentityProviderFields(violations: Violations, idp: IdentityProvider, options: { secretKept: boolean; allowHttpIssuers: boolean }, prefix = "identity_provider."): void {
  violations.name(`${prefix}name`, idp.name, { required: true, max: 128 });
  violations.description(`${prefix}description`, idp.description);
  violations.uid(`${prefix}default_role`, idp.defaultRole, false);
  const oidc = oidcOf(idp);
  if (!oidc) {
    violations.add(`${prefix}oidc`, "is required");
    return;
  }
  const at = `${prefix}oidc.`;
  checkIssuerUrl(violations, `${at}issuer`, oidc.issuer, { allowHttp: options.allowHttpIssuers });
  violations.text(`${at}client_id`, oidc.clientId, { required: true, max: 256 });
  const secretRequired = !oidc.pkceEnabled && !options.secretKept;
  violations.text(`${at}client_secret`, oidc.clientSecret, { required: secretRequired, max: 1024 });
  if (oidc.additionalScopes.length > 32) violations.add(`${at}additional_scopes`, "must hold at most 32 scopes");
  oidc.additionalScopes.forEach((scope, i) => violations.text(`${at}additional_scopes[${i}]`, scope, { required: true, max: 128, pattern: SCOPE }));
  violations.text(`${at}groups_claim`, oidc.groupsClaim, { max: 128, pattern: CLAIM });
}
