import type { Kysely, Migration } from "kysely";
import { binaryCollation, dialectOfDb } from "../../../store/dialect.js";

/** Frozen: identity providers, account associations, group invites, external group role mappings, terms acceptances. */
export const iamExtras: Migration = {
  async up(db: Kysely<any>) {
    const binary = binaryCollation(dialectOfDb(db));
    const text = (name: string) => [name, "text", (c: any) => c.notNull().modifyEnd(binary)] as const;
    const plain = (name: string) => [name, "text", (c: any) => c.notNull()] as const;

    await db.schema
      .createTable("identity_providers")
      .addColumn(...text("uid"))
      .addColumn(...text("group_uid"))
      .addColumn(...text("name"))
      .addColumn(...plain("description"))
      .addColumn(...plain("issuer"))
      .addColumn(...plain("client_id"))
      .addColumn(...plain("client_secret"))
      .addColumn(...plain("additional_scopes"))
      .addColumn(...plain("groups_claim"))
      .addColumn(...text("default_role_uid"))
      .addColumn("create_time", "bigint", (c) => c.notNull())
      .addColumn("update_time", "bigint", (c) => c.notNull())
      .addPrimaryKeyConstraint("identity_providers_pk", ["uid"])
      .addForeignKeyConstraint("identity_providers_group", ["group_uid"], "groups", ["uid"])
      .execute();
    await db.schema.createIndex("identity_providers_group_name").unique().on("identity_providers").columns(["group_uid", "name"]).execute();
    await db.schema.createIndex("identity_providers_name").on("identity_providers").columns(["name", "uid"]).execute();

    await db.schema
      .createTable("account_associations")
      .addColumn(...text("uid"))
      .addColumn(...text("group_uid"))
      .addColumn(...text("name"))
      .addColumn(...plain("description"))
      .addColumn(...plain("amazon_account_id"))
      .addColumn(...plain("google_project_id"))
      .addColumn(...plain("google_project_number"))
      .addColumn(...plain("azure_tenant_id"))
      .addColumn(...plain("azure_client_id"))
      .addColumn(...plain("github_installation_ids"))
      .addColumn("create_time", "bigint", (c) => c.notNull())
      .addColumn("update_time", "bigint", (c) => c.notNull())
      .addPrimaryKeyConstraint("account_associations_pk", ["uid"])
      .addForeignKeyConstraint("account_associations_group", ["group_uid"], "groups", ["uid"])
      .execute();
    await db.schema.createIndex("account_associations_group").unique().on("account_associations").columns(["group_uid"]).execute();
    await db.schema.createIndex("account_associations_name").on("account_associations").columns(["name", "uid"]).execute();

    await db.schema
      .createTable("group_invites")
      .addColumn(...text("uid"))
      .addColumn(...text("group_uid"))
      .addColumn(...text("role_uid"))
      .addColumn(...plain("email"))
      .addColumn(...text("code_hash"))
      .addColumn("single_use", "integer", (c) => c.notNull())
      .addColumn("expire_time", "bigint", (c) => c.notNull())
      .addColumn("used_time", "bigint")
      .addColumn("create_time", "bigint", (c) => c.notNull())
      .addPrimaryKeyConstraint("group_invites_pk", ["uid"])
      .addForeignKeyConstraint("group_invites_group", ["group_uid"], "groups", ["uid"])
      .execute();
    await db.schema.createIndex("group_invites_code_hash").unique().on("group_invites").columns(["code_hash"]).execute();
    await db.schema.createIndex("group_invites_group").on("group_invites").columns(["group_uid", "uid"]).execute();

    await db.schema
      .createTable("external_group_role_mappings")
      .addColumn(...text("uid"))
      .addColumn(...text("group_uid"))
      .addColumn(...text("identity_provider_uid"))
      .addColumn(...text("external_group"))
      .addColumn(...text("role_uid"))
      .addColumn("create_time", "bigint", (c) => c.notNull())
      .addColumn("update_time", "bigint", (c) => c.notNull())
      .addPrimaryKeyConstraint("external_group_role_mappings_pk", ["uid"])
      .addForeignKeyConstraint("external_group_role_mappings_group", ["group_uid"], "groups", ["uid"])
      .addForeignKeyConstraint("external_group_role_mappings_provider", ["identity_provider_uid"], "identity_providers", ["uid"])
      .execute();
    await db.schema
      .createIndex("external_group_role_mappings_unique")
      .unique()
      .on("external_group_role_mappings")
      .columns(["identity_provider_uid", "external_group", "role_uid"])
      .execute();
    await db.schema.createIndex("external_group_role_mappings_provider").on("external_group_role_mappings").columns(["identity_provider_uid", "uid"]).execute();
    await db.schema.createIndex("external_group_role_mappings_group").on("external_group_role_mappings").columns(["group_uid", "uid"]).execute();

    await db.schema
      .createTable("terms_acceptances")
      .addColumn(...text("uid"))
      .addColumn(...text("group_uid"))
      .addColumn(...text("doc_id"))
      .addColumn(...text("accepted_by"))
      .addColumn("create_time", "bigint", (c) => c.notNull())
      .addPrimaryKeyConstraint("terms_acceptances_pk", ["uid"])
      .addForeignKeyConstraint("terms_acceptances_group", ["group_uid"], "groups", ["uid"])
      .execute();
    await db.schema.createIndex("terms_acceptances_unique").unique().on("terms_acceptances").columns(["group_uid", "doc_id", "accepted_by"]).execute();
    await db.schema.createIndex("terms_acceptances_group").on("terms_acceptances").columns(["group_uid", "uid"]).execute();
  },
};
