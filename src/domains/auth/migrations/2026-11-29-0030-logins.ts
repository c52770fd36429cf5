import type { CreateTableBuilder, Kysely, Migration } from "kysely";
import { binaryCollation, dialectOfDb } from "../../../store/dialect.js";

/** Frozen: logins in progress and refresh tokens (people signing in). */
export const logins: Migration = {
  async up(db: Kysely<any>) {
    const binary = binaryCollation(dialectOfDb(db));
    const text = (name: string) => [name, "text", (c: any) => c.notNull().modifyEnd(binary)] as const;
    let table: CreateTableBuilder<string, string> = db.schema.createTable("logins");
    for (const name of ["uid", "kind", "provider_uid", "status", "state_hash", "nonce", "upstream_verifier", "redirect_uri", "client_state", "code_challenge", "code_hash", "device_code_hash", "user_code", "identity_uid", "person", "error"]) {
      table = table.addColumn(...text(name));
    }
    await table
      .addColumn("poll_interval", "integer", (c) => c.notNull())
      .addColumn("last_poll_time", "bigint", (c) => c.notNull())
      .addColumn("create_time", "bigint", (c) => c.notNull())
      .addColumn("expire_time", "bigint", (c) => c.notNull())
      .addPrimaryKeyConstraint("logins_pk", ["uid"])
      .execute();
    for (const column of ["state_hash", "code_hash", "device_code_hash", "user_code", "expire_time"]) {
      await db.schema.createIndex(`logins_${column}`).on("logins").column(column).execute();
    }
    await db.schema
      .createTable("refresh_tokens")
      .addColumn(...text("token_hash"))
      .addColumn(...text("family"))
      .addColumn(...text("identity_uid"))
      .addColumn("person", "text", (c) => c.notNull())
      .addColumn("create_time", "bigint", (c) => c.notNull())
      .addColumn("expire_time", "bigint", (c) => c.notNull())
      .addColumn("family_expire_time", "bigint", (c) => c.notNull())
      .addColumn("used_time", "bigint")
      .addColumn("revoked_time", "bigint")
      .addPrimaryKeyConstraint("refresh_tokens_pk", ["token_hash"])
      .execute();
    await db.schema.createIndex("refresh_tokens_family").on("refresh_tokens").column("family").execute();
    await db.schema.createIndex("refresh_tokens_family_expire").on("refresh_tokens").column("family_expire_time").execute();
  },
};
