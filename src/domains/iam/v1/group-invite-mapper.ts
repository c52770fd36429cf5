import { create } from "@bufbuild/protobuf";
import { GroupInviteSchema as V1GroupInviteSchema, StoredGroupInviteSchema, type GroupInvite as V1GroupInvite, type StoredGroupInvite } from "../../../../gen/platform/iam/v1/group_invites_pb.js";
import { RoleSchema as V1RoleSchema, type Role as V1Role } from "../../../../gen/platform/iam/v1/role_pb.js";
import type { GroupInvite, GroupInviteRole } from "../../../../gen/platform/iam/v2/group_invite_pb.js";
import { capabilitiesToV1 } from "./role-mapper.js";

function roleToV1(role: GroupInviteRole | undefined): V1Role | undefined {
  return role && create(V1RoleSchema, { id: role.uid, name: role.name, description: role.description, capabilities: capabilitiesToV1(role.capabilities) });
}

/** A new v2 invite in the v1 shape: with its code and its role. */
export function groupInviteToV1(invite: GroupInvite): V1GroupInvite {
  return create(V1GroupInviteSchema, { id: invite.uid, expiration: invite.expirationTime, role: roleToV1(invite.role), code: invite.code });
}

/** A stored v2 invite in the v1 shape: no code. */
export function storedGroupInviteToV1(invite: GroupInvite): StoredGroupInvite {
  return create(StoredGroupInviteSchema, {
    id: invite.uid,
    expiration: invite.expirationTime,
    role: roleToV1(invite.role),
    email: invite.email,
    createdAt: invite.createTime,
    singleUse: invite.singleUse,
  });
}
