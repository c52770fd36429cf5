import type { Kysely, Migration } from "kysely";
import { binaryCollation, dialectOfDb } from "../dialect.js";

/**
 * Frozen: the leases of background jobs, one row per job and key (a job with one lease has the
 * key ""): who holds it and until when (epoch ms; "" and 0 when nobody does).
 */
export const jobLeases: Migration = {
  async up(db: Kysely<any>) {
    const binary = binaryCollation(dialectOfDb(db));
    await db.schema
      .createTable("job_leases")
      .addColumn("job", "text", (c) => c.notNull().modifyEnd(binary))
      .addColumn("key", "text", (c) => c.notNull().modifyEnd(binary))
      .addColumn("holder", "text", (c) => c.notNull().defaultTo(""))
      .addColumn("lease_until", "bigint", (c) => c.notNull().defaultTo(0))
      .addPrimaryKeyConstraint("job_leases_pk", ["job", "key"])
      .execute();
  },
};
