import type { Kysely, Migration } from "kysely";

/**
 * Frozen: when each signing key starts signing (epoch ms). A rotated key is published first and
 * signs only from its activation time, so every replica and every verifier holds it before any
 * token needs it. Existing keys have been signing all along (0).
 */
export const signingKeyActivation: Migration = {
  async up(db: Kysely<any>) {
    await db.schema.alterTable("signing_keys").addColumn("activate_time", "bigint", (c) => c.notNull().defaultTo(0)).execute();
  },
};
