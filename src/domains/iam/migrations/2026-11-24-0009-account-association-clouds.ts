import type { Kysely, Migration } from "kysely";

/**
 * Frozen: an account association holds several Azure client ids by name and
 * GitHub installations by app (the hosted service's shape). A stored Azure
 * client id becomes the entry named `default`; stored installation ids go
 * under app id 0 (the app was not recorded), without names.
 */
export const accountAssociationClouds: Migration = {
  async up(db: Kysely<any>) {
    await db.schema.alterTable("account_associations").addColumn("azure_client_ids", "text", (c) => c.notNull().defaultTo("{}")).execute();
    await db.schema.alterTable("account_associations").addColumn("github_app_installations", "text", (c) => c.notNull().defaultTo("{}")).execute();
    const rows = await db.selectFrom("account_associations").select(["uid", "azure_client_id", "github_installation_ids"]).execute();
    for (const row of rows) {
      const ids = JSON.parse(row.github_installation_ids as string) as string[];
      await db
        .updateTable("account_associations")
        .set({
          azure_client_ids: JSON.stringify(row.azure_client_id ? { default: row.azure_client_id } : {}),
          github_app_installations: JSON.stringify(ids.length > 0 ? { "0": ids.map((installationId) => ({ installationId, name: "" })) } : {}),
        })
        .where("uid", "=", row.uid)
        .execute();
    }
    await db.schema.alterTable("account_associations").dropColumn("azure_client_id").execute();
    await db.schema.alterTable("account_associations").dropColumn("github_installation_ids").execute();
  },
};
