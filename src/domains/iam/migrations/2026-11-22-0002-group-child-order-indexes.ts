import type { Kysely, Migration } from "kysely";

/** Frozen: keyset pages of one group's children, in each sort order, without a sort step. */
export const groupChildOrderIndexes: Migration = {
  async up(db: Kysely<any>) {
    await db.schema.createIndex("groups_parent_uid").on("groups").columns(["parent_uid", "uid"]).execute();
    await db.schema.createIndex("groups_parent_create_time").on("groups").columns(["parent_uid", "create_time", "uid"]).execute();
    await db.schema.createIndex("groups_parent_update_time").on("groups").columns(["parent_uid", "update_time", "uid"]).execute();
  },
};
