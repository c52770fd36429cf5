import type { Kysely, Migration } from "kysely";

/**
 * Frozen: each repo's immutable tag patterns, a JSON array of strings; existing repos get none
 * (`[]`), so their tags move as before.
 */
export const immutableTags: Migration = {
  async up(db: Kysely<any>) {
    await db.schema.alterTable("repos").addColumn("immutable_tags", "text", (c) => c.notNull().defaultTo("[]")).execute();
  },
};
