import type { HandlerContext } from "@connectrpc/connect";
import { principalKey } from "../../access/principal.js";
import { getRole } from "./store/roles.js";
import { checkRoleScope } from "./role-binding-validation.js";
import type { Db } from "../kit/schema.js";
import { requireGrantable } from "./role-validation.js";

/**
 * Checks that `roleUid` may be granted on `groupUid` by the caller: the role is in scope
 * (`checkRoleScope`: FAILED_PRECONDITION otherwise), exists (NOT_FOUND otherwise), and the
 * caller holds every one of its capabilities there (`requireGrantable`, PERMISSION_DENIED
 * otherwise). Used by invites, external group role mappings and identity provider default
 * roles; role bindings apply the same rules.
 */
export async function requireGrantableRole(db: Db, ctx: HandlerContext, roleUid: string, groupUid: string): Promise<void> {
  checkRoleScope(groupUid, roleUid);
  const role = await getRole(db, roleUid);
  requireGrantable(ctx.values.get(principalKey), groupUid, role.capabilities, `granting role ${roleUid}`);
}
