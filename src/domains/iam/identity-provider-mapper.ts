import { create } from "@bufbuild/protobuf";
import { IdentityProviderSchema, type IdentityProvider, type IdentityProvider_OIDC } from "../../../gen/platform/iam/v2/identity_provider_pb.js";
import type { IdentityProviderChange, IdentityProviderRow } from "./store/identity-providers.js";
import { toTimestamp } from "../../aip/time.js";

/** The API view: the client secret is never part of it. */
export function identityProviderFromRow(row: IdentityProviderRow): IdentityProvider {
  return create(IdentityProviderSchema, {
    uid: row.uid,
    name: row.name,
    description: row.description,
    defaultRole: row.default_role_uid,
    configuration: {
      case: "oidc",
      value: {
        issuer: row.issuer,
        clientId: row.client_id,
        clientSecret: "",
        additionalScopes: JSON.parse(row.additional_scopes) as string[],
        groupsClaim: row.groups_claim,
        pkceEnabled: row.pkce_enabled === 1,
      },
    },
    createTime: toTimestamp(row.create_time),
    updateTime: toTimestamp(row.update_time),
  });
}

/** The provider's OIDC configuration (the only kind), or undefined. */
export function oidcOf(idp: IdentityProvider): IdentityProvider_OIDC | undefined {
  return idp.configuration.case === "oidc" ? idp.configuration.value : undefined;
}

/** The stored columns of a checked provider's writable fields; `sealedSecret` is the client secret as stored (sealed). */
export function identityProviderColumns(idp: IdentityProvider, sealedSecret: string, time: number): IdentityProviderChange {
  const oidc = oidcOf(idp)!;
  return {
    name: idp.name,
    description: idp.description,
    issuer: oidc.issuer,
    client_id: oidc.clientId,
    client_secret: sealedSecret,
    pkce_enabled: oidc.pkceEnabled ? 1 : 0,
    additional_scopes: JSON.stringify(oidc.additionalScopes),
    groups_claim: oidc.groupsClaim,
    default_role_uid: idp.defaultRole,
    update_time: time,
  };
}
