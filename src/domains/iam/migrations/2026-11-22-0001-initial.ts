import type { Kysely, Migration } from "kysely";
import { binaryCollation, dialectOfDb } from "../../../store/dialect.js";

/**
 * Frozen: the organization tree, identities, roles and bindings. Its name is the store's first
 * migration's, which holds the server's keys (src/store/migrations/2026-11-22-0001-initial.ts): the
 * store's migration list runs this part, then the store's, as that one migration.
 */
export const iamInitial: Migration = {
  async up(db: Kysely<any>) {
    const binary = binaryCollation(dialectOfDb(db));
    const text = (name: string) => [name, "text", (c: any) => c.notNull().modifyEnd(binary)] as const;

    await db.schema
      .createTable("groups")
      .addColumn(...text("uid"))
      .addColumn(...text("parent_uid"))
      .addColumn(...text("name"))
      .addColumn("description", "text", (c) => c.notNull())
      .addColumn("create_time", "bigint", (c) => c.notNull())
      .addColumn("update_time", "bigint", (c) => c.notNull())
      .addPrimaryKeyConstraint("groups_pk", ["uid"])
      .execute();
    await db.schema.createIndex("groups_parent_name").unique().on("groups").columns(["parent_uid", "name"]).execute();
    await db.schema.createIndex("groups_name").on("groups").columns(["name", "uid"]).execute();
    await db.schema.createIndex("groups_create_time").on("groups").columns(["create_time", "uid"]).execute();
    await db.schema.createIndex("groups_update_time").on("groups").columns(["update_time", "uid"]).execute();

    await db.schema
      .createTable("identities")
      .addColumn(...text("uid"))
      .addColumn(...text("group_uid"))
      .addColumn(...text("name"))
      .addColumn("description", "text", (c) => c.notNull())
      .addColumn("claim_match", "text", (c) => c.notNull())
      .addColumn("static_keys", "text", (c) => c.notNull())
      .addColumn("last_seen_time", "bigint")
      .addColumn("create_time", "bigint", (c) => c.notNull())
      .addColumn("update_time", "bigint", (c) => c.notNull())
      .addPrimaryKeyConstraint("identities_pk", ["uid"])
      .execute();
    await db.schema.createIndex("identities_name").on("identities").columns(["name", "uid"]).execute();

    await db.schema
      .createTable("roles")
      .addColumn(...text("uid"))
      .addColumn(...text("group_uid"))
      .addColumn(...text("name"))
      .addColumn("description", "text", (c) => c.notNull())
      .addColumn("built_in", "integer", (c) => c.notNull())
      .addColumn("create_time", "bigint", (c) => c.notNull())
      .addColumn("update_time", "bigint", (c) => c.notNull())
      .addPrimaryKeyConstraint("roles_pk", ["uid"])
      .execute();
    await db.schema.createIndex("roles_group_name").unique().on("roles").columns(["group_uid", "name"]).execute();

    await db.schema
      .createTable("role_capabilities")
      .addColumn(...text("role_uid"))
      .addColumn(...text("capability"))
      .addPrimaryKeyConstraint("role_capabilities_pk", ["role_uid", "capability"])
      .addForeignKeyConstraint("role_capabilities_role", ["role_uid"], "roles", ["uid"], (c) => c.onDelete("cascade"))
      .execute();

    await db.schema
      .createTable("role_bindings")
      .addColumn(...text("uid"))
      .addColumn(...text("group_uid"))
      .addColumn(...text("identity_uid"))
      .addColumn(...text("role_uid"))
      .addColumn("create_time", "bigint", (c) => c.notNull())
      .addPrimaryKeyConstraint("role_bindings_pk", ["uid"])
      .addForeignKeyConstraint("role_bindings_group", ["group_uid"], "groups", ["uid"])
      .addForeignKeyConstraint("role_bindings_identity", ["identity_uid"], "identities", ["uid"])
      .addForeignKeyConstraint("role_bindings_role", ["role_uid"], "roles", ["uid"])
      .execute();
    await db.schema.createIndex("role_bindings_identity").on("role_bindings").columns(["identity_uid", "group_uid"]).execute();
    await db.schema
      .createIndex("role_bindings_unique")
      .unique()
      .on("role_bindings")
      .columns(["group_uid", "identity_uid", "role_uid"])
      .execute();
  },
};
