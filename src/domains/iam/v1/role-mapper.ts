import { create, type MessageInitShape } from "@bufbuild/protobuf";
import { RoleSchema as V1RoleSchema, type Role as V1Role } from "../../../../gen/platform/iam/v1/role_pb.js";
import type { Role, RoleSchema } from "../../../../gen/platform/iam/v2/role_pb.js";

/** A v2 role in the v1 shape: `uid` is `id`; v1 shows no times. */
export function roleToV1(role: Role): V1Role {
  return create(V1RoleSchema, { id: role.uid, name: role.name, description: role.description, capabilities: role.capabilities });
}

/** A v1 role as the v2 role a Create or Update writes. */
export function roleFromV1(role: V1Role | undefined): MessageInitShape<typeof RoleSchema> {
  return { uid: role?.id ?? "", name: role?.name ?? "", description: role?.description ?? "", capabilities: role?.capabilities ?? [] };
}
