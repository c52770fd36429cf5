import { sql, type Kysely, type Migration } from "kysely";

/** Frozen: the retention lease is the `retention` row of `job_leases` (a lease held now goes with it); `retention_lease` keeps when the last pass ended. */
export const retentionLeaseMoved: Migration = {
  async up(db: Kysely<any>) {
    await sql`INSERT INTO job_leases (job, key, holder, lease_until) SELECT 'retention', '', holder, lease_until FROM retention_lease WHERE name = 'retention' AND holder <> ''`.execute(db);
    await db.schema.alterTable("retention_lease").dropColumn("holder").execute();
    await db.schema.alterTable("retention_lease").dropColumn("lease_until").execute();
  },
};
