import type { Kysely, Migration } from "kysely";

/**
 * Frozen: group invites and terms acceptances get `update_time` (every v2 resource shows one,
 * spec 2), set from `create_time` for the rows already stored.
 */
export const iamUpdateTimes: Migration = {
  async up(db: Kysely<any>) {
    for (const table of ["group_invites", "terms_acceptances"]) {
      await db.schema.alterTable(table).addColumn("update_time", "bigint", (c) => c.notNull().defaultTo(0)).execute();
      await db.updateTable(table).set((eb) => ({ update_time: eb.ref("create_time") })).execute();
    }
  },
};
