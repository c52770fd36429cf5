import { create, type MessageInitShape } from "@bufbuild/protobuf";
import { IdentityProviderSchema as V1IdentityProviderSchema, type IdentityProvider as V1IdentityProvider } from "../../../../gen/platform/iam/v1/identity_providers_pb.js";
import type { IdentityProvider, IdentityProviderSchema } from "../../../../gen/platform/iam/v2/identity_provider_pb.js";

/** A v2 identity provider in the v1 shape (`id`; no times). The client secret is never shown. */
export function identityProviderToV1(provider: IdentityProvider): V1IdentityProvider {
  const { configuration } = provider;
  return create(V1IdentityProviderSchema, {
    id: provider.uid,
    name: provider.name,
    description: provider.description,
    defaultRole: provider.defaultRole,
    configuration: configuration.case === "oidc" ? { case: "oidc", value: { ...configuration.value, $typeName: undefined, clientSecret: "" } } : { case: undefined },
  });
}

/** A v1 identity provider as the v2 one a Create or Update writes. */
export function identityProviderFromV1(provider: V1IdentityProvider | undefined): MessageInitShape<typeof IdentityProviderSchema> {
  const configuration = provider?.configuration;
  return {
    uid: provider?.id ?? "",
    name: provider?.name ?? "",
    description: provider?.description ?? "",
    defaultRole: provider?.defaultRole ?? "",
    configuration: configuration?.case === "oidc" ? { case: "oidc", value: { ...configuration.value, $typeName: undefined } } : { case: undefined },
  };
}
