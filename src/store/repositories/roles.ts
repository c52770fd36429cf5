import type { Db } from "../tables.js";

export interface BuiltInRole {
  uid: string;
  name: string;
  description: string;
  capabilities: string[];
}

/**
 * Makes the stored built-in roles equal `roles` (names, descriptions, capability
 * sets). Idempotent; run at start-up so a release can change what they grant.
 */
export async function syncBuiltInRoles(db: Db, roles: BuiltInRole[], now: number): Promise<void> {
  for (const role of roles) {
    const existing = await db.selectFrom("roles").select("uid").where("uid", "=", role.uid).executeTakeFirst();
    if (existing) {
      await db.updateTable("roles").set({ name: role.name, description: role.description }).where("uid", "=", role.uid).execute();
    } else {
      await db
        .insertInto("roles")
        .values({ uid: role.uid, group_uid: "", name: role.name, description: role.description, built_in: 1, create_time: now, update_time: now })
        .execute();
    }
    const stored = await db.selectFrom("role_capabilities").select("capability").where("role_uid", "=", role.uid).execute();
    const have = new Set(stored.map((r) => r.capability));
    const want = new Set(role.capabilities);
    const missing = role.capabilities.filter((c) => !have.has(c));
    const extra = [...have].filter((c) => !want.has(c));
    if (missing.length > 0) {
      await db.insertInto("role_capabilities").values(missing.map((capability) => ({ role_uid: role.uid, capability }))).execute();
    }
    if (extra.length > 0) {
      await db.deleteFrom("role_capabilities").where("role_uid", "=", role.uid).where("capability", "in", extra).execute();
    }
  }
}
