import { create } from "@bufbuild/protobuf";
import type { ServiceImpl } from "@connectrpc/connect";
import { IdentityProviderListSchema, IdentityProviders } from "../../../../gen/platform/iam/v1/identity_providers_pb.js";
import { IdentityProvidersService } from "../../../../gen/platform/iam/v2/identity_providers_service_pb.js";
import { callV2, deleteV1, listAllOf, replaceAll } from "../../../aip/v1/index.js";
import { identityProviderFromV1, identityProviderToV1 } from "./identity-provider-mapper.js";

const v2 = IdentityProvidersService.method;

/** IdentityProviders v1 (`/iam/v1/identityProviders`): each call is the v2 IdentityProvidersService call it maps onto. */
export function createIdentityProvidersV1Service(providers: ServiceImpl<typeof IdentityProvidersService>): ServiceImpl<typeof IdentityProviders> {
  return {
    create: async (req, ctx) =>
      identityProviderToV1(
        await callV2(v2.createIdentityProvider, providers.createIdentityProvider, { parent: req.parentId, identityProvider: identityProviderFromV1(req.identityProvider) }, ctx, { parent: "parent_id" }),
      ),

    update: async (req, ctx) =>
      identityProviderToV1(
        await callV2(v2.updateIdentityProvider, providers.updateIdentityProvider, { identityProvider: identityProviderFromV1(req), updateMask: replaceAll() }, ctx, { identity_provider: "" }),
      ),

    list: async (req, ctx) => {
      const items = await listAllOf(req, (uidp, page) => callV2(v2.listIdentityProviders, providers.listIdentityProviders, { uidp, name: req.name, ...page }, ctx), (answer) => answer.identityProviders);
      return create(IdentityProviderListSchema, { items: items.map(identityProviderToV1) });
    },

    delete: (req, ctx) => deleteV1("identity provider", req.id, () => callV2(v2.deleteIdentityProvider, providers.deleteIdentityProvider, { uid: req.id }, ctx)),
  };
}
