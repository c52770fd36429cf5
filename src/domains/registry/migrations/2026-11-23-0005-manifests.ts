import type { Kysely, Migration } from "kysely";
import { binaryCollation, bytesType, dialectOfDb } from "../../../store/dialect.js";

/** Frozen: the image manifests and indexes of each repo, with the facts the API serves from them. */
export const manifests: Migration = {
  async up(db: Kysely<any>) {
    const dialect = dialectOfDb(db);
    const binary = binaryCollation(dialect);
    const text = (name: string) => [name, "text", (c: any) => c.notNull().modifyEnd(binary)] as const;
    await db.schema
      .createTable("manifests")
      .addColumn(...text("repo_uid"))
      .addColumn(...text("digest"))
      .addColumn(...text("media_type"))
      .addColumn("content", bytesType(dialect), (c) => c.notNull())
      .addColumn("size", "bigint", (c) => c.notNull())
      .addColumn(...text("kind"))
      .addColumn("image_size", "bigint", (c) => c.notNull())
      .addColumn(...text("architecture"))
      .addColumn(...text("os"))
      .addColumn(...text("artifact_type"))
      .addColumn(...text("subject_digest"))
      .addColumn("create_time", "bigint", (c) => c.notNull())
      .addPrimaryKeyConstraint("manifests_pk", ["repo_uid", "digest"])
      .addForeignKeyConstraint("manifests_repo", ["repo_uid"], "repos", ["uid"])
      .execute();
    await db.schema.createIndex("manifests_subject").on("manifests").columns(["repo_uid", "subject_digest", "digest"]).execute();
  },
};
