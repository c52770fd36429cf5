import type { Kysely, Migration } from "kysely";

/**
 * Frozen: a role binding made from an identity provider's groups claim names the external group
 * role mapping that made it (`managed_by`, "" for bindings made by a caller), so the next login
 * can take away what the person's groups no longer grant without touching any other binding.
 */
export const managedBindings: Migration = {
  async up(db: Kysely<any>) {
    await db.schema.alterTable("role_bindings").addColumn("managed_by", "text", (c) => c.notNull().defaultTo("")).execute();
    await db.schema.createIndex("role_bindings_managed_by").on("role_bindings").columns(["managed_by"]).execute();
  },
};
