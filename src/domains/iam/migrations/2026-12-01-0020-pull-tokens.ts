import type { Kysely, Migration } from "kysely";

/**
 * Frozen: an identity may be a pull token, proving itself to the registry host with a password
 * whose SHA-256 (`pull_token_hash`, hex; "" for every other identity) is kept, accepted until
 * `pull_token_expire_time`.
 */
export const pullTokens: Migration = {
  async up(db: Kysely<any>) {
    await db.schema.alterTable("identities").addColumn("pull_token_hash", "text", (c) => c.notNull().defaultTo("")).execute();
    await db.schema.alterTable("identities").addColumn("pull_token_expire_time", "bigint").execute();
  },
};
