import type { Kysely, Migration } from "kysely";
import { binaryCollation, dialectOfDb } from "../../../store/dialect.js";

/** Frozen: retention policies of groups (for one repo or all below), and the one lease of whoever applies them. */
export const retention: Migration = {
  async up(db: Kysely<any>) {
    const binary = binaryCollation(dialectOfDb(db));
    await db.schema
      .createTable("retention_policies")
      .addColumn("uid", "text", (c) => c.primaryKey().modifyEnd(binary))
      .addColumn("group_uid", "text", (c) => c.notNull().modifyEnd(binary))
      .addColumn("repo_uid", "text", (c) => c.notNull().defaultTo("").modifyEnd(binary))
      .addColumn("keep_last", "integer", (c) => c.notNull().defaultTo(0))
      .addColumn("keep_tags", "text", (c) => c.notNull().defaultTo("[]"))
      .addColumn("expire_after_ms", "bigint", (c) => c.notNull().defaultTo(0))
      .addColumn("untagged_grace_ms", "bigint", (c) => c.notNull().defaultTo(0))
      .addColumn("create_time", "bigint", (c) => c.notNull())
      .addColumn("update_time", "bigint", (c) => c.notNull())
      .addUniqueConstraint("retention_policies_target", ["group_uid", "repo_uid"])
      .execute();
    await db.schema.createIndex("retention_policies_repo").on("retention_policies").column("repo_uid").execute();
    await db.schema
      .createTable("retention_lease")
      .addColumn("name", "text", (c) => c.primaryKey())
      .addColumn("holder", "text", (c) => c.notNull().defaultTo(""))
      .addColumn("lease_until", "bigint", (c) => c.notNull().defaultTo(0))
      .addColumn("last_run_time", "bigint", (c) => c.notNull().defaultTo(0))
      .execute();
  },
};
