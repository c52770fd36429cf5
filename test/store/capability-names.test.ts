import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { Migrator, sql } from "kysely";
import { newRootUid } from "../../src/api/uidp.js";
import { BUILT_IN_ROLES, builtInRole } from "../../src/auth/capabilities.js";
import { prepareStore } from "../../src/bootstrap.js";
import { openDatabase, dialectOfDb, type OpenedDatabase } from "../../src/store/dialect.js";
import { migrations } from "../../src/store/migrations/index.js";
import { getRole } from "../../src/store/repositories/roles.js";
import { migrate } from "../../src/store/store.js";
import { dropFresh, testDatabases } from "../support/databases.js";

/** An installation from before the hosted capability names: its roles store the old names. */
for (const database of await testDatabases()) {
  describe(`capability names of an older install on ${database.name}`, { skip: database.skip }, () => {
    let opened: OpenedDatabase;
    let url: string;

    before(async () => {
      url = await database.fresh();
      opened = openDatabase(url);
    });
    after(async () => {
      await opened?.db.destroy();
      await dropFresh(url);
    });

    test("the migration renames stored capabilities; the next start brings built-in roles up to date", async () => {
      const db = opened.db;
      const schema =
        dialectOfDb(db) === "postgres" ? (await sql<{ schema: string }>`select current_schema() as schema`.execute(db)).rows[0].schema : undefined;
      const migrator = new Migrator({ db, provider: { getMigrations: async () => migrations }, migrationTableSchema: schema });
      const before = await migrator.migrateTo("2026-11-23-0006-blobs");
      assert.equal(before.error, undefined);

      const org = newRootUid();
      const custom = `${org}/0123456789abcdef`;
      await db.insertInto("groups").values({ uid: org, parent_uid: "", name: "old-install", description: "", create_time: 1, update_time: 1 }).execute();
      await db.insertInto("roles").values({ uid: custom, group_uid: org, name: "auditor", description: "", built_in: 0, create_time: 1, update_time: 1 }).execute();
      const viewer = builtInRole("viewer");
      await db.insertInto("roles").values({ uid: viewer.uid, group_uid: "", name: "viewer", description: "old", built_in: 1, create_time: 1, update_time: 1 }).execute();
      const stored = (role_uid: string, names: string[]) => db.insertInto("role_capabilities").values(names.map((capability) => ({ role_uid, capability }))).execute();
      await stored(custom, ["CAP_IAM_IDENTITIES_LIST", "CAP_IAM_TERMS_ACCEPT", "CAP_EVENTS_SUBSCRIPTIONS_CREATE", "CAP_REPO_LIST", "CAP_REGISTRY_PULL"]);
      // The old built-in viewer: old names, and a capability it no longer holds.
      await stored(viewer.uid, ["CAP_IAM_GROUPS_LIST", "CAP_IAM_IDENTITIES_LIST", "CAP_EVENTS_SUBSCRIPTIONS_LIST", "CAP_REGISTRY_PULL"]);

      await migrate(db);
      assert.deepEqual(
        (await getRole(db, custom)).capabilities,
        ["CAP_EVENTS_SUBSCRIPTION_CREATE", "CAP_IAM_IDENTITY_LIST", "CAP_REGISTRY_PULL", "CAP_REPO_LIST", "CAP_TERMS_ACCEPT"],
      );

      await prepareStore({ db, dialect: opened.dialect, description: "", close: async () => {} }, 2);
      for (const role of BUILT_IN_ROLES) {
        const read = await getRole(db, role.uid);
        assert.deepEqual(read.capabilities, [...role.capabilities].sort(), role.name);
        assert.equal(read.description, role.description);
      }
      assert.ok(!(await getRole(db, viewer.uid)).capabilities.includes("CAP_REGISTRY_PULL"));
    });
  });
}
