import { create, type MessageInitShape } from "@bufbuild/protobuf";
import {
  Identity_ClaimMatchSchema,
  Identity_StaticKeysSchema,
  IdentitySchema as V1IdentitySchema,
  type Identity as V1Identity,
} from "../../../../gen/platform/iam/v1/identity_pb.js";
import type { Identity, IdentitySchema } from "../../../../gen/platform/iam/v2/identity_pb.js";

/** A v2 identity in the v1 shape: `id`, `created_at`, `updated_at`, `last_seen`, `static`. */
export function identityToV1(identity: Identity): V1Identity {
  const { relationship } = identity;
  return create(V1IdentitySchema, {
    id: identity.uid,
    name: identity.name,
    description: identity.description,
    createdAt: identity.createTime,
    updatedAt: identity.updateTime,
    lastSeen: identity.lastSeenTime,
    relationship:
      relationship.case === "claimMatch"
        ? { case: "claimMatch", value: create(Identity_ClaimMatchSchema, { ...relationship.value, $typeName: undefined }) }
        : relationship.case === "staticKeys"
          ? {
              case: "static",
              value: create(Identity_StaticKeysSchema, {
                issuer: relationship.value.issuer,
                subject: relationship.value.subject,
                issuerKeys: relationship.value.issuerKeys,
                expiration: relationship.value.expirationTime,
              }),
            }
          : { case: undefined },
  });
}

/** A v1 identity as the v2 identity a Create or Update writes. */
export function identityFromV1(identity: V1Identity | undefined): MessageInitShape<typeof IdentitySchema> {
  const relationship = identity?.relationship;
  return {
    uid: identity?.id ?? "",
    name: identity?.name ?? "",
    description: identity?.description ?? "",
    relationship:
      relationship?.case === "claimMatch"
        ? { case: "claimMatch", value: { ...relationship.value, $typeName: undefined } }
        : relationship?.case === "static"
          ? {
              case: "staticKeys",
              value: {
                issuer: relationship.value.issuer,
                subject: relationship.value.subject,
                issuerKeys: relationship.value.issuerKeys,
                expirationTime: relationship.value.expiration,
              },
            }
          : { case: undefined },
  };
}
