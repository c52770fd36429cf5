import type { Kysely, Migration } from "kysely";

/**
 * Frozen: subscriptions get `update_time` (every v2 resource shows one, spec 2), set from
 * `create_time` for the rows already stored.
 */
export const subscriptionUpdateTime: Migration = {
  async up(db: Kysely<any>) {
    await db.schema.alterTable("subscriptions").addColumn("update_time", "bigint", (c) => c.notNull().defaultTo(0)).execute();
    await db.updateTable("subscriptions").set((eb) => ({ update_time: eb.ref("create_time") })).execute();
  },
};
