import assert from "node:assert/strict";
import { after, describe, test } from "node:test";
import type { Kysely } from "kysely";
import { newRootUid } from "../../src/aip/uidp.js";
import { BUILT_IN_ROLES, builtInRole } from "../../src/access/capabilities.js";
import { prepareStore } from "../../src/server/bootstrap.js";
import { openDatabase, type OpenedDatabase } from "../../src/store/dialect.js";
import type { Database } from "../../src/domains/kit/schema.js";
import { getRole } from "../../src/domains/iam/store/roles.js";
import { advisoryEtag } from "../../src/domains/vulnerabilities/advisory-rows.js";
import { migrate } from "../../src/server/open-store.js";
import { tagForms } from "../../src/domains/registry/tag-forms.js";
import { dropFresh, testDatabases } from "../support/databases.js";
import { createSecretBox, SECRETS_KEY_NAME } from "../../src/store/secret-box.js";
import { serverSecret } from "../../src/store/server-keys.js";

/** Installations made by older releases: the schema and data as of a migration, then the current ones. */
for (const database of await testDatabases()) {
  describe(`older installs on ${database.name}`, { skip: database.skip }, () => {
    const opened: Array<{ db: OpenedDatabase<Database>; url: string }> = [];
    after(async () => {
      for (const { db, url } of opened) {
        await db.db.destroy();
        await dropFresh(url);
      }
    });

    /** A fresh database migrated up to `name` only. */
    async function installedAt(name: string): Promise<OpenedDatabase<Database>> {
      const url = await database.fresh();
      const db = openDatabase<Database>(url);
      opened.push({ db, url });
      await migrate(db.db, name);
      return db;
    }

    test("the migration renames stored capabilities; the next start brings built-in roles up to date", async () => {
      const opened = await installedAt("2026-11-23-0006-blobs");
      const db = opened.db;

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

      await prepareStore({ ...opened, description: "", close: async () => {} }, 2);
      for (const role of BUILT_IN_ROLES) {
        const read = await getRole(db, role.uid);
        assert.deepEqual(read.capabilities, [...role.capabilities].sort(), role.name);
        assert.equal(read.description, role.description);
      }
      assert.ok(!(await getRole(db, viewer.uid)).capabilities.includes("CAP_REGISTRY_PULL"));
    });

    test("queued report jobs get their repo's organization; a match naming no repo gets none", async () => {
      const db = (await installedAt("2026-11-27-0080-grants-clock")).db;
      const org = newRootUid();
      const job = (digest: string, repo_uid: string, kind: string) => ({ digest, repo_uid, kind, generation: 1, attempts: 0, next_attempt_time: 1, lease_until: 0, create_time: 1 });
      await (db as unknown as Kysely<Record<string, Record<string, unknown>>>)
        .insertInto("report_jobs")
        .values([job("sha256:1", `${org}/0123456789abcdef/0123456789abcdef`, "inventory"), job("sha256:2", "", "match")])
        .execute();
      await migrate(db);
      const rows = await db.selectFrom("report_jobs").select(["digest", "organization"]).orderBy("digest").execute();
      assert.deepEqual(rows, [{ digest: "sha256:1", organization: org }, { digest: "sha256:2", organization: "" }]);
    });

    test("an account association's Azure client id and GitHub installation ids move to the keyed forms", async () => {
      const db = (await installedAt("2026-11-24-0008-hosted-capability-names")).db;
      const org = newRootUid();
      const bare = newRootUid();
      for (const [uid, name] of [[org, "assoc-org"], [bare, "assoc-bare"]]) {
        await db.insertInto("groups").values({ uid, parent_uid: "", name, description: "", create_time: 1, update_time: 1 }).execute();
      }
      const row = (uid: string, azure: string, github: string[]) => ({
        uid, group_uid: uid, name: "", description: "", amazon_account_id: "", google_project_id: "", google_project_number: "", azure_tenant_id: "",
        azure_client_id: azure, github_installation_ids: JSON.stringify(github), create_time: 1, update_time: 1,
      });
      await (db as unknown as Kysely<Record<string, Record<string, unknown>>>).insertInto("account_associations").values([row(org, "00000000-0000-0000-0000-000000000001", ["42", "43"]), row(bare, "", [])]).execute();
      await migrate(db);
      const read = async (uid: string) =>
        db.selectFrom("account_associations").select(["azure_client_ids", "github_app_installations"]).where("uid", "=", uid).executeTakeFirstOrThrow();
      assert.deepEqual(JSON.parse((await read(org)).azure_client_ids), { default: "00000000-0000-0000-0000-000000000001" });
      assert.deepEqual(JSON.parse((await read(org)).github_app_installations), { "0": [{ installationId: "42", name: "" }, { installationId: "43", name: "" }] });
      assert.deepEqual(await read(bare), { azure_client_ids: "{}", github_app_installations: "{}" });
    });

    test("stored group invites, terms acceptances and subscriptions get an update time: their create time", async () => {
      const db = (await installedAt("2026-11-27-0080-grants-clock")).db;
      const org = newRootUid();
      await db.insertInto("groups").values({ uid: org, parent_uid: "", name: "update-times", description: "", create_time: 1, update_time: 1 }).execute();
      const old = db as unknown as Kysely<Record<string, Record<string, unknown>>>;
      const invite = `${org}/0000000000000001`;
      const acceptance = `${org}/0000000000000002`;
      const subscription = `${org}/0000000000000003`;
      await old
        .insertInto("group_invites")
        .values({ uid: invite, group_uid: org, role_uid: builtInRole("viewer").uid, email: "", code_hash: "h", single_use: 1, expire_time: 99, used_time: null, create_time: 5 })
        .execute();
      await old.insertInto("terms_acceptances").values({ uid: acceptance, group_uid: org, doc_id: "tos", accepted_by: "someone", create_time: 6 }).execute();
      await old.insertInto("subscriptions").values({ uid: subscription, group_uid: org, sink: "https://example.com/hook", create_time: 7 }).execute();
      await migrate(db);
      const times = (table: "group_invites" | "terms_acceptances" | "subscriptions", uid: string) =>
        db.selectFrom(table).select(["create_time", "update_time"]).where("uid", "=", uid).executeTakeFirstOrThrow();
      assert.deepEqual(await times("group_invites", invite), { create_time: 5, update_time: 5 });
      assert.deepEqual(await times("terms_acceptances", acceptance), { create_time: 6, update_time: 6 });
      assert.deepEqual(await times("subscriptions", subscription), { create_time: 7, update_time: 7 });
    });

    test("stored advisories lose their entries' opaque objects and gain distinct etags, matching the importer's", async () => {
      const db = (await installedAt("2026-11-25-0014-events")).db;
      await db.insertInto("osv_records").values({ uid: "RUSTSEC-2099-0001", modified: "2024-01-01T00:00:00Z", modified_time: 1, withdrawn_time: null, document: "{}" }).execute();
      const entry = {
        package: { ecosystem: "crates.io", name: "demo" },
        ranges: [{ type: "SEMVER", events: [{ introduced: "0" }, { fixed: "1.0.0" }] }],
        ecosystem_specific: { affects: { functions: ["demo::f"] } },
        database_specific: { categories: ["memory-corruption"] },
      };
      const advisory = (uid: string, artifact_name: string) => ({
        uid, advisory_id: "RUSTSEC-2099-0001", ecosystem: "crates.io", artifact_name, affected: JSON.stringify([entry]),
        aliases: "[]", summary: "s", severity: "[]", withdrawn_time: null, create_time: 1, update_time: 1,
      });
      const old = db as unknown as Kysely<Record<string, Record<string, unknown>>>;
      await old.insertInto("advisories").values([advisory("a".repeat(40), "demo"), advisory("b".repeat(40), "other")]).execute();
      await migrate(db);
      const rows = await db.selectFrom("advisories").selectAll().orderBy("uid").execute();
      for (const row of rows) {
        assert.deepEqual(JSON.parse(row.affected), [{ package: entry.package, ranges: entry.ranges }]);
        const { uid: _uid, etag, ...served } = row;
        assert.equal(etag, advisoryEtag(served));
      }
      assert.notEqual(rows[0].etag, rows[1].etag);
    });

    test("stored tags gain the forms of their names, as new tags get them", async () => {
      const db = (await installedAt("2026-11-27-0080-grants-clock")).db;
      const org = newRootUid();
      const repo = `${org}/0123456789abcdef`;
      await db.insertInto("groups").values({ uid: org, parent_uid: "", name: "tag-forms", description: "", create_time: 1, update_time: 1 }).execute();
      const old = db as unknown as Kysely<Record<string, Record<string, unknown>>>;
      await old.insertInto("repos").values({ uid: repo, group_uid: org, org_uid: org, name: "app", description: "", readme: "", create_time: 1, update_time: 1 }).execute();
      const names = ["latest", `sha256-${"ab".repeat(32)}.sig`, "1.2-20240131", "1.2-r3", "1.2-20240131-r3"];
      await old
        .insertInto("tags")
        .values(names.map((name, i) => ({ uid: `${repo}/${String(i).padStart(16, "0")}`, repo_uid: repo, name, digest: `sha256:${"0".repeat(64)}`, deprecated: 0, create_time: 1, update_time: 1 })))
        .execute();
      await migrate(db);
      const rows = await db.selectFrom("tags").select(["name", "forms"]).where("repo_uid", "=", repo).execute();
      assert.deepEqual(Object.fromEntries(rows.map((r) => [r.name, Number(r.forms)])), Object.fromEntries(names.map((n) => [n, tagForms(n)])));
      assert.deepEqual(names.map(tagForms), [0, 1, 2, 4, 6]);
    });

    test("identity providers' client secrets stored in clear are sealed, and open with the server's secrets key", async () => {
      const opened = await installedAt("2026-11-28-0010-report-job-organization");
      // eslint-disable-next-line @typescript-eslint/no-explicit-any -- the schema as of an older migration
      const db = opened.db as unknown as Kysely<any>;
      const org = newRootUid();
      await db.insertInto("groups").values({ uid: org, parent_uid: "", name: "idp-install", description: "", create_time: 1, update_time: 1 }).execute();
      const row = (uid: string, client_secret: string) => ({
        uid, group_uid: org, name: uid.slice(-4), description: "", issuer: "https://login.example.com", client_id: "c", client_secret,
        additional_scopes: "[]", groups_claim: "", default_role_uid: "", create_time: 1, update_time: 1,
      });
      await db.insertInto("identity_providers").values([row(`${org}/00000000000000a1`, "s3cret-value"), row(`${org}/00000000000000a2`, "")]).execute();
      await migrate(opened.db);
      const stored = await db.selectFrom("identity_providers").select(["uid", "client_secret", "pkce_enabled"]).orderBy("uid").execute();
      assert.ok(String(stored[0].client_secret).startsWith("sealed:v1:"), "sealed");
      assert.ok(!String(stored[0].client_secret).includes("s3cret"), "no clear text left");
      assert.equal(stored[1].client_secret, "", "an empty secret stays empty");
      assert.deepEqual(stored.map((r) => Number(r.pkce_enabled)), [0, 0]);
      const key = await serverSecret(db, SECRETS_KEY_NAME, () => "not used: the migration made it", 2);
      assert.equal(createSecretBox(Buffer.from(key, "base64url")).open(String(stored[0].client_secret)), "s3cret-value");
    });

    test("a retention lease and a feed's lease held at the upgrade move to job_leases; what the jobs remember stays", async () => {
      const db = (await installedAt("2026-12-03-0050-upstream-refresh-tokens")).db;
      const old = db as unknown as Kysely<Record<string, Record<string, unknown>>>;
      await old.insertInto("retention_lease").values({ name: "retention", holder: "replica-a", lease_until: 5_000, last_run_time: 1_000 }).execute();
      const feed = { etag: "", last_modified: "", cursor: "c", last_error: "", next_attempt_time: 9, last_attempt_time: 0, last_success_time: 0, failures: 0 };
      const counts = { records_read: 0, records_added: 0, records_updated: 0, records_unchanged: 0, records_rejected: 0 };
      await old
        .insertInto("advisory_feeds")
        .values([
          { url: "https://feeds.example/held.zip", lease_holder: "replica-b", lease_until: 7_000, ...feed, ...counts },
          { url: "https://feeds.example/free.zip", lease_holder: "", lease_until: 0, ...feed, ...counts },
        ])
        .execute();
      await migrate(db);
      const leases = await db.selectFrom("job_leases").selectAll().orderBy("job").execute();
      assert.deepEqual(
        leases.map((l) => ({ ...l, lease_until: Number(l.lease_until) })),
        [
          { job: "advisory-feed", key: "https://feeds.example/held.zip", holder: "replica-b", lease_until: 7_000 },
          { job: "retention", key: "", holder: "replica-a", lease_until: 5_000 },
        ],
      );
      const retention = await db.selectFrom("retention_lease").selectAll().executeTakeFirstOrThrow();
      assert.deepEqual({ ...retention, last_run_time: Number(retention.last_run_time) }, { name: "retention", last_run_time: 1_000 });
      const feeds = await db.selectFrom("advisory_feeds").select(["url", "cursor"]).orderBy("url").execute();
      assert.deepEqual(feeds, [
        { url: "https://feeds.example/free.zip", cursor: "c" },
        { url: "https://feeds.example/held.zip", cursor: "c" },
      ]);
    });
  });
}
