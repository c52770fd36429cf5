import type { Kysely, Migration } from "kysely";
import { binaryCollation, dialectOfDb } from "../../../store/dialect.js";

/**
 * Frozen: the blobs the content store holds, which repos link them, uploads in
 * progress, and the manifests an index names.
 */
export const blobs: Migration = {
  async up(db: Kysely<any>) {
    const binary = binaryCollation(dialectOfDb(db));
    const text = (name: string) => [name, "text", (c: any) => c.notNull().modifyEnd(binary)] as const;
    await db.schema
      .createTable("blobs")
      .addColumn(...text("digest"))
      .addColumn("size", "bigint", (c) => c.notNull())
      .addColumn("create_time", "bigint", (c) => c.notNull())
      .addPrimaryKeyConstraint("blobs_pk", ["digest"])
      .execute();
    await db.schema
      .createTable("repo_blobs")
      .addColumn(...text("repo_uid"))
      .addColumn(...text("digest"))
      .addPrimaryKeyConstraint("repo_blobs_pk", ["repo_uid", "digest"])
      .addForeignKeyConstraint("repo_blobs_repo", ["repo_uid"], "repos", ["uid"])
      .addForeignKeyConstraint("repo_blobs_blob", ["digest"], "blobs", ["digest"])
      .execute();
    await db.schema
      .createTable("uploads")
      .addColumn(...text("id"))
      .addColumn(...text("repo_uid"))
      .addColumn("create_time", "bigint", (c) => c.notNull())
      .addPrimaryKeyConstraint("uploads_pk", ["id"])
      .addForeignKeyConstraint("uploads_repo", ["repo_uid"], "repos", ["uid"])
      .execute();
    await db.schema
      .createTable("manifest_refs")
      .addColumn(...text("repo_uid"))
      .addColumn(...text("parent_digest"))
      .addColumn(...text("child_digest"))
      .addPrimaryKeyConstraint("manifest_refs_pk", ["repo_uid", "parent_digest", "child_digest"])
      .execute();
    await db.schema.createIndex("manifest_refs_child").on("manifest_refs").columns(["repo_uid", "child_digest"]).execute();
  },
};
