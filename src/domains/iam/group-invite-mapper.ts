import { createHash, randomBytes } from "node:crypto";
import { create } from "@bufbuild/protobuf";
import { GroupInviteSchema, type GroupInvite } from "../../../gen/platform/iam/v2/group_invite_pb.js";
import type { RoleWithCapabilities } from "./store/roles.js";
import { capsOf } from "./role-mapper.js";
import type { GroupInviteRow } from "./store/group-invites.js";
import { toTimestamp } from "../../aip/time.js";

/** A fresh invite code: 32 base64url characters (192 random bits), never beginning with "-". */
export function newInviteCode(): string {
  // Never beginning with "-": a code is pasted as a command-line operand (`platform-api invite accept <code>`).
  for (;;) {
    const code = randomBytes(24).toString("base64url");
    if (!code.startsWith("-")) return code;
  }
}

/** What the store keeps instead of a code. */
export function inviteCodeHash(code: string): string {
  return createHash("sha256").update(code).digest("hex");
}

/**
 * The API view, with the role it names hydrated (`role` is absent when that
 * role no longer exists); `code` only right after creation.
 */
export function groupInviteFromRow(row: GroupInviteRow, role: RoleWithCapabilities | undefined, code = ""): GroupInvite {
  return create(GroupInviteSchema, {
    uid: row.uid,
    roleUid: row.role_uid,
    role: role && { uid: role.uid, name: role.name, description: role.description, capabilities: capsOf(role.capabilities) },
    email: row.email,
    expirationTime: toTimestamp(row.expire_time),
    singleUse: row.single_use === 1,
    code,
    usedTime: row.used_time === null ? undefined : toTimestamp(row.used_time),
    createTime: toTimestamp(row.create_time),
    updateTime: toTimestamp(row.update_time),
  });
}
