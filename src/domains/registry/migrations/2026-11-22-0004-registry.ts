import type { Kysely, Migration } from "kysely";
import { binaryCollation, dialectOfDb } from "../../../store/dialect.js";

/** Frozen: repos, tags and the history of every digest a tag has pointed to. */
export const registry: Migration = {
  async up(db: Kysely<any>) {
    const binary = binaryCollation(dialectOfDb(db));
    const text = (name: string) => [name, "text", (c: any) => c.notNull().modifyEnd(binary)] as const;

    await db.schema
      .createTable("repos")
      .addColumn(...text("uid"))
      .addColumn(...text("group_uid"))
      .addColumn(...text("org_uid"))
      .addColumn(...text("name"))
      .addColumn("description", "text", (c) => c.notNull())
      .addColumn("readme", "text", (c) => c.notNull())
      .addColumn("create_time", "bigint", (c) => c.notNull())
      .addColumn("update_time", "bigint", (c) => c.notNull())
      .addPrimaryKeyConstraint("repos_pk", ["uid"])
      .addForeignKeyConstraint("repos_group", ["group_uid"], "groups", ["uid"])
      .execute();
    await db.schema.createIndex("repos_org_name").unique().on("repos").columns(["org_uid", "name"]).execute();
    await db.schema.createIndex("repos_group_uid").on("repos").columns(["group_uid", "uid"]).execute();
    await db.schema.createIndex("repos_name").on("repos").columns(["name", "uid"]).execute();
    await db.schema.createIndex("repos_create_time").on("repos").columns(["create_time", "uid"]).execute();

    await db.schema
      .createTable("tags")
      .addColumn(...text("uid"))
      .addColumn(...text("repo_uid"))
      .addColumn(...text("name"))
      .addColumn(...text("digest"))
      .addColumn("deprecated", "integer", (c) => c.notNull())
      .addColumn("create_time", "bigint", (c) => c.notNull())
      .addColumn("update_time", "bigint", (c) => c.notNull())
      .addPrimaryKeyConstraint("tags_pk", ["uid"])
      .addForeignKeyConstraint("tags_repo", ["repo_uid"], "repos", ["uid"])
      .execute();
    await db.schema.createIndex("tags_repo_name").unique().on("tags").columns(["repo_uid", "name"]).execute();
    await db.schema.createIndex("tags_repo_uid").on("tags").columns(["repo_uid", "uid"]).execute();
    await db.schema.createIndex("tags_repo_update_time").on("tags").columns(["repo_uid", "update_time", "uid"]).execute();
    await db.schema.createIndex("tags_repo_digest").on("tags").columns(["repo_uid", "digest"]).execute();

    await db.schema
      .createTable("tag_history")
      .addColumn(...text("repo_uid"))
      .addColumn(...text("tag_name"))
      .addColumn("seq", "bigint", (c) => c.notNull())
      .addColumn(...text("digest"))
      .addColumn("update_time", "bigint", (c) => c.notNull())
      .addPrimaryKeyConstraint("tag_history_pk", ["repo_uid", "tag_name", "seq"])
      .execute();
    await db.schema.createIndex("tag_history_time").on("tag_history").columns(["repo_uid", "tag_name", "update_time", "seq"]).execute();
  },
};
