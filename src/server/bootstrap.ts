import { builtInRole, BUILT_IN_ROLES } from "../access/capabilities.js";
import { newChildUid, newRootUid } from "../aip/uidp.js";
import { Violations } from "../aip/validation.js";
import { checkGroupFields } from "../domains/iam/index.js";
import { insertGroup } from "../domains/iam/index.js";
import { insertIdentity } from "../domains/iam/index.js";
import { bindRole } from "../domains/iam/index.js";
import { syncBuiltInRoles } from "../domains/iam/index.js";
import { type Store } from "./open-store.js";
import { inTransaction } from "../store/transaction.js";

/** Brings stored data the code owns (built-in roles) up to date. Run before serving. */
export async function prepareStore(store: Store, now: number): Promise<void> {
  await syncBuiltInRoles(store.db, BUILT_IN_ROLES, now);
}

/**
 * Creates an organization, an owner identity under it and the binding of that
 * identity to the built-in `owner` role on it, in one transaction.
 * Throws INVALID_ARGUMENT for a bad name and ALREADY_EXISTS for a taken one.
 */
export async function bootstrapOrganization(store: Store, name: string, now: number) {
  const violations = new Violations();
  checkGroupFields(violations, { name, description: "" }, true, "--org ");
  violations.throwIfAny();
  await prepareStore(store, now);
  const organization = { uid: newRootUid(), parent_uid: "", name, description: "", create_time: now, update_time: now };
  const identity = {
    uid: newChildUid(organization.uid),
    group_uid: organization.uid,
    name: "owner",
    description: `Bootstrap owner of ${name}`,
    claim_match: "",
    static_keys: "",
    last_seen_time: null,
    create_time: now,
    update_time: now,
  };
  await inTransaction(store.db, undefined, async (trx) => {
    await insertGroup(trx, organization);
    await insertIdentity(trx, identity);
    await bindRole(trx, organization.uid, identity.uid, builtInRole("owner").uid, now);
  });
  return { organization, identity };
}
