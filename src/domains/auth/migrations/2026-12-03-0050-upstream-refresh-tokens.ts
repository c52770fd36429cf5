import type { Kysely, Migration } from "kysely";

/**
 * Frozen: the refresh token the person's provider issued at their login, sealed
 * (`upstream_refresh_token`, "" when it issued none), kept with the login until its tokens are
 * redeemed and then with the refresh token it yields, so that a refresh asks the provider again.
 */
export const upstreamRefreshTokens: Migration = {
  async up(db: Kysely<any>) {
    for (const table of ["logins", "refresh_tokens"]) {
      await db.schema.alterTable(table).addColumn("upstream_refresh_token", "text", (c) => c.notNull().defaultTo("")).execute();
    }
  },
};
