import { sql, type Kysely, type Migration } from "kysely";

/**
 * Frozen: the organization of each report job, which the queue takes turns by: the root uid of the
 * repo its blobs are read from (the first 40 characters of any uid below it), "" for a match job
 * that names no repo. Existing jobs get theirs from their repo.
 */
export const reportJobOrganization: Migration = {
  async up(db: Kysely<any>) {
    await db.schema.alterTable("report_jobs").addColumn("organization", "text", (c) => c.notNull().defaultTo("")).execute();
    await db.updateTable("report_jobs").set({ organization: sql`substr(repo_uid, 1, 40)` }).where("repo_uid", "<>", "").execute();
  },
};
