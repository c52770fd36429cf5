import { durationMs } from "@bufbuild/protobuf/wkt";
import type { GroupInvite } from "../../../gen/platform/iam/v2/group_invite_pb.js";
import type { Violations } from "../../aip/validation.js";

export const DAY_MS = 24 * 60 * 60 * 1000;
export const DEFAULT_INVITE_TTL_MS = 7 * DAY_MS;
export const MAX_INVITE_TTL_MS = 30 * DAY_MS;
export const MIN_INVITE_TTL_MS = 60 * 1000;

const EMAIL = /^[^@\s]+@[^@\s]+\.[^@\s]+$/;

/**
 * What UpdateGroupInvite may change (AIP-134 mask paths): the role, the email, the lifetime
 * (`ttl`), and `single_use`, which is immutable (`checkSingleUseKept`). The code and the
 * output-only fields are not updatable.
 */
export const GROUP_INVITE_UPDATABLE = ["role_uid", "email", "ttl", "single_use"] as const;

/** `single_use` is IMMUTABLE (AIP-203): an update may carry it only with the stored value. */
export function checkSingleUseKept(violations: Violations, stored: boolean, next: boolean, prefix = "group_invite."): void {
  if (stored !== next) violations.add(`${prefix}single_use`, "cannot change; delete the invite and create another");
}

/** Checks an invite's fields (a new one, or one after an update) and returns its lifetime in milliseconds. */
export function checkGroupInviteFields(violations: Violations, invite: GroupInvite, prefix = "group_invite."): number {
  violations.uid(`${prefix}role_uid`, invite.roleUid);
  violations.text(`${prefix}email`, invite.email, { max: 254, pattern: EMAIL });
  if (!invite.ttl) return DEFAULT_INVITE_TTL_MS;
  const ms = durationMs(invite.ttl);
  if (ms < MIN_INVITE_TTL_MS || ms > MAX_INVITE_TTL_MS) violations.add(`${prefix}ttl`, "must be between 1 minute and 30 days");
  return ms;
}
