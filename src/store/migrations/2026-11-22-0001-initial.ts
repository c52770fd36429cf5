import type { Kysely, Migration } from "kysely";

/**
 * Frozen: the server's keys and secrets. The migration of this name also creates IAM's core tables
 * (src/domains/iam/migrations/2026-11-22-0001-initial.ts), first: the store's migration list runs
 * both parts as one migration, so installs that recorded it stay valid.
 */
export const initial: Migration = {
  async up(db: Kysely<any>) {
    await db.schema
      .createTable("signing_keys")
      .addColumn("kid", "text", (c) => c.primaryKey())
      .addColumn("algorithm", "text", (c) => c.notNull())
      .addColumn("private_jwk", "text", (c) => c.notNull())
      .addColumn("public_jwk", "text", (c) => c.notNull())
      .addColumn("create_time", "bigint", (c) => c.notNull())
      .execute();

    await db.schema
      .createTable("server_secrets")
      .addColumn("name", "text", (c) => c.primaryKey())
      .addColumn("value", "text", (c) => c.notNull())
      .addColumn("create_time", "bigint", (c) => c.notNull())
      .execute();
  },
};
