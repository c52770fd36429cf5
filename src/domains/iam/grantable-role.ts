import type { HandlerContext } from "@connectrpc/connect";
import { principalKey } from "../../auth/principal.js";
import { assignableRole } from "./store/roles.js";
import type { Db } from "../../store/tables.js";
import { requireGrantable } from "./role-validation.js";

/**
 * Checks that `roleUid` may be granted on `groupUid` by the caller: the role is
 * built-in or belongs to the group or an ancestor (NOT_FOUND otherwise), and
 * the caller holds every one of its capabilities there (`requireGrantable`,
 * PERMISSION_DENIED otherwise). Used by invites, external group role mappings
 * and identity provider default roles.
 */
export async function requireGrantableRole(db: Db, ctx: HandlerContext, roleUid: string, groupUid: string): Promise<void> {
  const role = await assignableRole(db, roleUid, groupUid);
  await requireGrantable(ctx.values.get(principalKey), groupUid, role.capabilities, `granting role ${roleUid}`);
}
