import type { Kysely, Migration } from "kysely";
import { binaryCollation, dialectOfDb } from "../../../store/dialect.js";

/** Frozen: upstream registries backing a repo path prefix of an organization, and when each pulled-through tag was last asked of its upstream. */
export const upstreams: Migration = {
  async up(db: Kysely<any>) {
    const binary = binaryCollation(dialectOfDb(db));
    await db.schema
      .createTable("upstreams")
      .addColumn("uid", "text", (c) => c.primaryKey().modifyEnd(binary))
      .addColumn("group_uid", "text", (c) => c.notNull().modifyEnd(binary))
      .addColumn("name", "text", (c) => c.notNull().modifyEnd(binary))
      .addColumn("url", "text", (c) => c.notNull())
      .addColumn("repo_prefix", "text", (c) => c.notNull().modifyEnd(binary))
      .addColumn("upstream_prefix", "text", (c) => c.notNull().defaultTo(""))
      .addColumn("username", "text", (c) => c.notNull().defaultTo(""))
      .addColumn("password", "text", (c) => c.notNull().defaultTo(""))
      .addColumn("tag_freshness_ms", "bigint", (c) => c.notNull())
      .addColumn("include_repos", "text", (c) => c.notNull().defaultTo("[]"))
      .addColumn("exclude_repos", "text", (c) => c.notNull().defaultTo("[]"))
      .addColumn("create_time", "bigint", (c) => c.notNull())
      .addColumn("update_time", "bigint", (c) => c.notNull())
      .addUniqueConstraint("upstreams_prefix", ["group_uid", "repo_prefix"])
      .execute();
    await db.schema
      .createTable("upstream_tag_checks")
      .addColumn("repo_uid", "text", (c) => c.notNull().modifyEnd(binary))
      .addColumn("tag", "text", (c) => c.notNull().modifyEnd(binary))
      .addColumn("check_time", "bigint", (c) => c.notNull())
      .addPrimaryKeyConstraint("upstream_tag_checks_pk", ["repo_uid", "tag"])
      .execute();
  },
};
