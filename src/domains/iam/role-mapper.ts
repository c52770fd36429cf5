import { create } from "@bufbuild/protobuf";
import { CapSchema, type Cap } from "../../../gen/platform/common/v1/authorization_pb.js";
import { RoleSchema, type Role } from "../../../gen/platform/iam/v2/role_pb.js";
import type { RoleWithCapabilities } from "./store/roles.js";
import { toTimestamp } from "../../aip/time.js";

/** Stored capability names to enum values, in enum order; names no longer in the enum are left out. */
export function capsOf(names: readonly string[]): Cap[] {
  const out: Cap[] = [];
  for (const name of names) {
    const value = CapSchema.values.find((v) => v.name === name);
    if (value) out.push(value.number as Cap);
  }
  return out.sort((a, b) => a - b);
}

export function roleFromRow(row: RoleWithCapabilities): Role {
  return create(RoleSchema, {
    uid: row.uid,
    name: row.name,
    description: row.description,
    capabilities: capsOf(row.capabilities),
    createTime: toTimestamp(row.create_time),
    updateTime: toTimestamp(row.update_time),
  });
}
