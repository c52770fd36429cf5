import type { GroupInvite } from "../../../gen/platform/iam/v2/group_invite_pb.js";
import type { Violations } from "../../api/validation.js";

export const DAY_MS = 24 * 60 * 60 * 1000;
export const DEFAULT_INVITE_TTL_MS = 7 * DAY_MS;
export const MAX_INVITE_TTL_MS = 30 * DAY_MS;
export const MIN_INVITE_TTL_MS = 60 * 1000;

const EMAIL = /^[^@\s]+@[^@\s]+\.[^@\s]+$/;

/** Checks a new invite and returns its lifetime in milliseconds. */
export function checkGroupInviteFields(violations: Violations, invite: GroupInvite, prefix = "group_invite."): number {
  violations.uid(`${prefix}role_uid`, invite.roleUid);
  violations.text(`${prefix}email`, invite.email, { max: 254, pattern: EMAIL });
  if (!invite.ttl) return DEFAULT_INVITE_TTL_MS;
  const ms = Number(invite.ttl.seconds) * 1000 + Math.trunc(invite.ttl.nanos / 1e6);
  if (ms < MIN_INVITE_TTL_MS || ms > MAX_INVITE_TTL_MS) violations.add(`${prefix}ttl`, "must be between 1 minute and 30 days");
  return ms;
}
