import { create } from "@bufbuild/protobuf";
import type { ServiceImpl } from "@connectrpc/connect";
import { Identities, IdentityListSchema } from "../../../../gen/platform/iam/v1/identity_pb.js";
import { IdentitiesService } from "../../../../gen/platform/iam/v2/identities_service_pb.js";
import { callV2, deleteV1, listAllOf, replaceAll } from "../../../aip/v1/index.js";
import { identityFromV1, identityToV1 } from "./identity-mapper.js";

const v2 = IdentitiesService.method;
/** v2 field paths of a Create as v1 names them (v1 calls static keys `static`, their expiration `expiration`). */
const CREATE_FIELDS = { parent: "parent_id", "identity.static_keys": "identity.static", "identity.static_keys.expiration_time": "identity.static.expiration" };

/** Identities v1 (`/iam/v1/identities`): each call is the v2 IdentitiesService call it maps onto. */
export function createIdentitiesV1Service(identities: ServiceImpl<typeof IdentitiesService>): ServiceImpl<typeof Identities> {
  return {
    create: async (req, ctx) =>
      identityToV1(await callV2(v2.createIdentity, identities.createIdentity, { parent: req.parentId, identity: identityFromV1(req.identity) }, ctx, CREATE_FIELDS)),

    update: async (req, ctx) =>
      identityToV1(await callV2(v2.updateIdentity, identities.updateIdentity, { identity: identityFromV1(req), updateMask: replaceAll() }, ctx, { identity: "", "identity.static_keys": "static", "identity.static_keys.expiration_time": "static.expiration" })),

    list: async (req, ctx) => {
      const items = await listAllOf(req, (uidp, page) => callV2(v2.listIdentities, identities.listIdentities, { uidp, ...page }, ctx), (answer) => answer.identities);
      return create(IdentityListSchema, { items: items.map(identityToV1) });
    },

    delete: (req, ctx) => deleteV1("identity", req.id, () => callV2(v2.deleteIdentity, identities.deleteIdentity, { uid: req.id }, ctx)),
  };
}
