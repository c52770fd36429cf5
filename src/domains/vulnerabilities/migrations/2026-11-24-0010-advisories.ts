import type { Kysely, Migration } from "kysely";
import { binaryCollation, dialectOfDb } from "../../../store/dialect.js";

/** Frozen: OSV records, the names (ids and aliases) that find them, and one advisory per (record, package). */
export const advisories: Migration = {
  async up(db: Kysely<any>) {
    const binary = binaryCollation(dialectOfDb(db));
    const text = (name: string) => [name, "text", (c: any) => c.notNull().modifyEnd(binary)] as const;

    await db.schema
      .createTable("osv_records")
      .addColumn(...text("uid"))
      .addColumn("modified", "text", (c) => c.notNull())
      .addColumn("modified_time", "bigint", (c) => c.notNull())
      .addColumn("withdrawn_time", "bigint")
      .addColumn("document", "text", (c) => c.notNull())
      .addPrimaryKeyConstraint("osv_records_pk", ["uid"])
      .execute();
    await db.schema.createIndex("osv_records_modified").on("osv_records").columns(["modified_time", "uid"]).execute();

    await db.schema
      .createTable("osv_names")
      .addColumn(...text("name"))
      .addColumn(...text("record_uid"))
      .addPrimaryKeyConstraint("osv_names_pk", ["name", "record_uid"])
      .addForeignKeyConstraint("osv_names_record", ["record_uid"], "osv_records", ["uid"])
      .execute();
    await db.schema.createIndex("osv_names_record").on("osv_names").columns(["record_uid"]).execute();

    await db.schema
      .createTable("advisories")
      .addColumn(...text("uid"))
      .addColumn(...text("advisory_id"))
      .addColumn(...text("ecosystem"))
      .addColumn(...text("artifact_name"))
      .addColumn("affected", "text", (c) => c.notNull())
      .addColumn("aliases", "text", (c) => c.notNull())
      .addColumn("summary", "text", (c) => c.notNull())
      .addColumn("severity", "text", (c) => c.notNull())
      .addColumn("withdrawn_time", "bigint")
      .addColumn("create_time", "bigint", (c) => c.notNull())
      .addColumn("update_time", "bigint", (c) => c.notNull())
      .addPrimaryKeyConstraint("advisories_pk", ["uid"])
      .addForeignKeyConstraint("advisories_record", ["advisory_id"], "osv_records", ["uid"])
      .execute();
    await db.schema.createIndex("advisories_record").on("advisories").columns(["advisory_id", "uid"]).execute();
    await db.schema.createIndex("advisories_artifact").on("advisories").columns(["artifact_name", "uid"]).execute();
    await db.schema.createIndex("advisories_update_time").on("advisories").columns(["update_time", "uid"]).execute();
  },
};
