import type { Kysely, Migration } from "kysely";
import { binaryCollation, dialectOfDb } from "../../../store/dialect.js";

/** Frozen: artifacts of each organization's library index and their versions. */
export const artifacts: Migration = {
  async up(db: Kysely<any>) {
    const binary = binaryCollation(dialectOfDb(db));
    const text = (name: string) => [name, "text", (c: any) => c.notNull().modifyEnd(binary)] as const;

    await db.schema
      .createTable("artifacts")
      .addColumn(...text("uid"))
      .addColumn(...text("group_uid"))
      .addColumn(...text("ecosystem"))
      .addColumn(...text("name"))
      .addColumn(...text("name_lower"))
      .addColumn("description", "text", (c) => c.notNull())
      .addColumn("latest_version", "text", (c) => c.notNull())
      .addColumn("version_count", "integer", (c) => c.notNull())
      .addColumn("digest", "text", (c) => c.notNull())
      .addColumn("create_time", "bigint", (c) => c.notNull())
      .addColumn("update_time", "bigint", (c) => c.notNull())
      .addPrimaryKeyConstraint("artifacts_pk", ["uid"])
      .addForeignKeyConstraint("artifacts_group", ["group_uid"], "groups", ["uid"])
      .execute();
    await db.schema.createIndex("artifacts_ecosystem_name").on("artifacts").columns(["ecosystem", "name", "uid"]).execute();
    await db.schema.createIndex("artifacts_group").on("artifacts").columns(["group_uid", "uid"]).execute();

    await db.schema
      .createTable("artifact_versions")
      .addColumn(...text("uid"))
      .addColumn(...text("artifact_uid"))
      .addColumn("version", "text", (c) => c.notNull())
      .addColumn("rank", "integer", (c) => c.notNull())
      .addColumn("description", "text", (c) => c.notNull())
      .addColumn("size_bytes", "bigint", (c) => c.notNull())
      .addColumn("publish_time", "bigint")
      .addColumn("create_time", "bigint", (c) => c.notNull())
      .addColumn("update_time", "bigint", (c) => c.notNull())
      .addPrimaryKeyConstraint("artifact_versions_pk", ["uid"])
      .addForeignKeyConstraint("artifact_versions_artifact", ["artifact_uid"], "artifacts", ["uid"])
      .execute();
    await db.schema.createIndex("artifact_versions_rank").on("artifact_versions").columns(["artifact_uid", "rank", "uid"]).execute();
  },
};
