import type { HandlerContext } from "@connectrpc/connect";
import { permissionDenied } from "../../api/errors.js";
import { principalKey } from "../../auth/principal.js";
import { assignableRole } from "../../store/repositories/group-invites.js";
import type { Db } from "../../store/tables.js";

/**
 * Checks that `roleUid` may be granted on `groupUid` by the caller: the role is
 * built-in or belongs to the group or an ancestor (NOT_FOUND otherwise), and
 * the caller holds every one of its capabilities there (PERMISSION_DENIED
 * otherwise), so nobody hands out more than they have. Used by invites,
 * external group role mappings and identity provider default roles.
 */
export async function requireGrantableRole(db: Db, ctx: HandlerContext, roleUid: string, groupUid: string): Promise<void> {
  const role = await assignableRole(db, roleUid, groupUid);
  const caller = ctx.values.get(principalKey);
  const grants = caller ? await caller.grants() : undefined;
  if (!grants?.has(groupUid, role.capabilities)) {
    throw permissionDenied(`granting role ${roleUid} on ${groupUid} needs every capability of that role there`);
  }
}
