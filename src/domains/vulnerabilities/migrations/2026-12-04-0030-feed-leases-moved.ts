import { sql, type Kysely, type Migration } from "kysely";

/** Frozen: a feed's lease is its `advisory-feed` row of `job_leases`, keyed by its URL (a lease held now goes with it). */
export const feedLeasesMoved: Migration = {
  async up(db: Kysely<any>) {
    await sql`INSERT INTO job_leases (job, key, holder, lease_until) SELECT 'advisory-feed', url, lease_holder, lease_until FROM advisory_feeds WHERE lease_holder <> ''`.execute(db);
    await db.schema.alterTable("advisory_feeds").dropColumn("lease_holder").execute();
    await db.schema.alterTable("advisory_feeds").dropColumn("lease_until").execute();
  },
};
