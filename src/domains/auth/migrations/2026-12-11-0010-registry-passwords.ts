import type { Kysely, Migration } from "kysely";
import { binaryCollation, dialectOfDb } from "../../../store/dialect.js";

/** Frozen: a person's registry passwords (only a salted, keyed hash of each secret). */
export const registryPasswords: Migration = {
  async up(db: Kysely<any>) {
    const binary = binaryCollation(dialectOfDb(db));
    await db.schema
      .createTable("registry_passwords")
      .addColumn("id", "text", (c) => c.notNull().modifyEnd(binary))
      .addColumn("identity_uid", "text", (c) => c.notNull().modifyEnd(binary))
      .addColumn("description", "text", (c) => c.notNull())
      .addColumn("salt", "text", (c) => c.notNull())
      .addColumn("secret_hash", "text", (c) => c.notNull())
      .addColumn("create_time", "bigint", (c) => c.notNull())
      .addColumn("expire_time", "bigint")
      .addColumn("last_used_time", "bigint")
      .addPrimaryKeyConstraint("registry_passwords_pk", ["id"])
      .execute();
    await db.schema.createIndex("registry_passwords_identity").on("registry_passwords").column("identity_uid").execute();
  },
};
