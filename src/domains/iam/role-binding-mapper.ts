import { create } from "@bufbuild/protobuf";
import { RoleBindingSchema, type RoleBinding } from "../../../gen/platform/iam/v2/role_binding_pb.js";
import type { HydratedRoleBindingRow } from "./store/role-bindings.js";
import { toTimestamp } from "../../aip/time.js";
import { issuerAndSubject } from "./identity-mapper.js";

export function roleBindingFromRow(row: HydratedRoleBindingRow): RoleBinding {
  return create(RoleBindingSchema, {
    uid: row.uid,
    identity: {
      uid: row.identity_uid,
      name: row.identity_name,
      description: row.identity_description,
      ...issuerAndSubject(row.identity_claim_match, row.identity_static_keys),
    },
    group: { uid: row.group_uid, name: row.group_name, description: row.group_description },
    role: { uid: row.role_uid, name: row.role_name, description: row.role_description },
    createTime: toTimestamp(row.create_time),
  });
}
