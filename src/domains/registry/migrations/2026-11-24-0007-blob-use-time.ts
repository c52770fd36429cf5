import { sql, type Kysely, type Migration } from "kysely";

/**
 * Frozen: when a push last used each blob (uploaded, mounted, imported or named by a
 * manifest it stored), which garbage collection compares with its grace period. Existing
 * blobs start at their creation time.
 */
export const blobUseTime: Migration = {
  async up(db: Kysely<any>) {
    await db.schema.alterTable("blobs").addColumn("use_time", "bigint", (c) => c.notNull().defaultTo(0)).execute();
    await sql`update blobs set use_time = create_time`.execute(db);
    await db.schema.createIndex("blobs_use_time").on("blobs").columns(["use_time", "digest"]).execute();
  },
};
