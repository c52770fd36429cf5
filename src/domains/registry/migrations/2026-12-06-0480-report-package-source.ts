import type { Kysely, Migration } from "kysely";

/**
 * Frozen: where a report's package inventory came from: `layers` (the image's layers and attached
 * SBOMs read) or `attestation:<key name>` (a verified SBOM attestation); existing reports get ""
 * (read before the choice existed: the layers).
 */
export const reportPackageSource: Migration = {
  async up(db: Kysely<any>) {
    await db.schema.alterTable("image_reports").addColumn("package_source", "text", (c) => c.notNull().defaultTo("")).execute();
  },
};
