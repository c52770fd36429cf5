import type { Kysely, Migration } from "kysely";

/** Frozen: when a push last set each tag, moved or not (epoch ms); existing tags get 0 (never pushed since). */
export const tagPushTime: Migration = {
  async up(db: Kysely<any>) {
    await db.schema.alterTable("tags").addColumn("push_time", "bigint", (c) => c.notNull().defaultTo(0)).execute();
  },
};
