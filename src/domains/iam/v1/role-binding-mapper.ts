import { create, type MessageInitShape } from "@bufbuild/protobuf";
import { RoleBindingSchema as V1RoleBindingSchema, type RoleBinding as V1RoleBinding } from "../../../../gen/platform/iam/v1/role_binding_pb.js";
import type { RoleBinding, RoleBindingInputSchema } from "../../../../gen/platform/iam/v2/role_binding_pb.js";

/** A v2 (hydrated) role binding in the v1 shape: the uids of its identity, group and role. */
export function roleBindingToV1(binding: RoleBinding): V1RoleBinding {
  return create(V1RoleBindingSchema, {
    id: binding.uid,
    identity: binding.identity?.uid ?? "",
    group: binding.group?.uid ?? "",
    role: binding.role?.uid ?? "",
    createdAt: binding.createTime,
  });
}

/** A v1 role binding as the v2 input a Create or Update writes (`group` is where it was created). */
export function roleBindingFromV1(binding: V1RoleBinding | undefined): MessageInitShape<typeof RoleBindingInputSchema> {
  return { uid: binding?.id ?? "", identityUid: binding?.identity ?? "", roleUid: binding?.role ?? "" };
}
