import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { sql } from "kysely";
import { WAL_SIZE_LIMIT } from "../../src/store/dialect.js";
import { InUseError, StoreError } from "../../src/store/errors.js";
import { apiErrorOf } from "../../src/aip/store-errors.js";
import { OWNERSHIP } from "../../src/server/domains.js";
import { ApiError } from "../../src/aip/errors.js";
import { createPager, type Page } from "../../src/aip/pagination.js";
import { newChildUid, newRootUid } from "../../src/aip/uidp.js";
import { BUILT_IN_ROLES, builtInRole } from "../../src/access/capabilities.js";
import { grantsFrom } from "../../src/access/principal.js";
import { deleteGroup, getGroup, groupOrderable, insertGroup, listGroups, updateGroup, type GroupRow } from "../../src/domains/iam/store/groups.js";
import { insertIdentity } from "../../src/domains/iam/store/identities.js";
import { grantsOf, insertRoleBinding } from "../../src/domains/iam/store/role-bindings.js";
import { syncBuiltInRoles } from "../../src/domains/iam/store/roles.js";
import { serverSecret } from "../../src/store/server-keys.js";
import { migrate, openStore, type Store } from "../../src/server/open-store.js";
import { inTransaction } from "../../src/store/transaction.js";
import type { UidpFilter } from "../../src/domains/kit/list-query.js";
import { dropFresh, testDatabases } from "../support/databases.js";

const kind = (e: unknown) => (e instanceof StoreError ? apiErrorOf(e).kind : e instanceof ApiError ? e.kind : String(e));

function group(uid: string, parent: string, name: string, time: number): GroupRow {
  return { uid, parent_uid: parent, name, description: "", create_time: time, update_time: time };
}

/** One conformance suite; every backend must pass it unchanged. */
for (const database of await testDatabases()) {
  describe(`store on ${database.name}`, { skip: database.skip }, () => {
    let store: Store;
    let url: string;
    const pager = createPager({ secret: Buffer.from("k") });

    before(async () => {
      url = await database.fresh();
      store = await openStore(url);
    });
    after(async () => {
      await store?.close();
      await dropFresh(url);
    });

    if (database.name === "sqlite") {
      test("the write-ahead log is truncated to WAL_SIZE_LIMIT after a checkpoint (journal_size_limit)", async () => {
        const limit = Number((await sql<{ journal_size_limit: number }>`pragma journal_size_limit`.execute(store.db)).rows[0].journal_size_limit);
        assert.equal(limit, WAL_SIZE_LIMIT);
      });
    }

    test("migrations are idempotent", async () => {
      await migrate(store.db);
      await migrate(store.db);
    });

    test("groups: insert, get, update, unique names among siblings", async () => {
      const org = newRootUid();
      await insertGroup(store.db, group(org, "", "store-org-1", 1));
      assert.equal((await getGroup(store.db, org)).name, "store-org-1");
      await assert.rejects(insertGroup(store.db, group(newRootUid(), "", "store-org-1", 1)), (e) => kind(e) === "ALREADY_EXISTS");
      const a = newChildUid(org);
      await insertGroup(store.db, group(a, org, "a", 2));
      await insertGroup(store.db, group(newChildUid(org), org, "b", 2));
      await assert.rejects(insertGroup(store.db, group(newChildUid(org), org, "a", 2)), (e) => kind(e) === "ALREADY_EXISTS");
      await assert.rejects(insertGroup(store.db, group(newChildUid(a), newChildUid(org), "x", 2)), (e) => kind(e) === "NOT_FOUND");
      await assert.rejects(updateGroup(store.db, a, { name: "b", description: "", update_time: 3 }), (e) => kind(e) === "ALREADY_EXISTS");
      assert.equal((await updateGroup(store.db, a, { name: "a2", description: "d", update_time: 3 })).description, "d");
      await assert.rejects(getGroup(store.db, newChildUid(org)), (e) => kind(e) === "NOT_FOUND");
    });

    test("delete refuses a group with child groups or owned resources", async () => {
      const org = newRootUid();
      await insertGroup(store.db, group(org, "", "store-org-del", 1));
      const folder = newChildUid(org);
      await insertGroup(store.db, group(folder, org, "f", 1));
      await assert.rejects(deleteGroup(store.db, org, OWNERSHIP.ownedByGroup), (e) => e instanceof InUseError && e.violation === "RESOURCE_NOT_EMPTY");
      const identity = newChildUid(folder);
      await insertIdentity(store.db, { uid: identity, group_uid: folder, name: "i", description: "", claim_match: "", static_keys: "", last_seen_time: null, create_time: 1, update_time: 1 });
      await assert.rejects(deleteGroup(store.db, folder, OWNERSHIP.ownedByGroup), (e) => kind(e) === "FAILED_PRECONDITION");
    });

    test("a failed transaction writes nothing; an aborted signal rolls back", async () => {
      const org = newRootUid();
      await assert.rejects(
        inTransaction(store.db, undefined, async (trx) => {
          await insertGroup(trx, group(org, "", "store-org-tx", 1));
          throw new Error("boom");
        }),
      );
      await assert.rejects(getGroup(store.db, org), (e) => kind(e) === "NOT_FOUND");
      const aborted = AbortSignal.abort();
      await assert.rejects(inTransaction(store.db, aborted, (trx) => insertGroup(trx, group(org, "", "store-org-tx", 1))), (e) => kind(e) === "DEADLINE_EXCEEDED");
      await assert.rejects(getGroup(store.db, org), (e) => kind(e) === "NOT_FOUND");
    });

    describe("listing", () => {
      const org = newRootUid();
      const folder = newChildUid(org);
      const names: string[] = [];
      before(async () => {
        await insertGroup(store.db, group(org, "", "store-org-list", 0));
        await insertGroup(store.db, group(folder, org, "folder", 0));
        for (let i = 0; i < 23; i++) {
          const name = `g${String((i * 7) % 23).padStart(2, "0")}`;
          names.push(name);
          await insertGroup(store.db, group(newChildUid(folder), folder, name, 100 + (i % 5)));
        }
      });

      async function all(uidp: UidpFilter, orderBy: string, pageSize: number) {
        const seen: GroupRow[] = [];
        let after: Page["after"];
        for (let round = 0; round < 100; round++) {
          const page: Page = { ...pager.parse({ pageSize, pageToken: "", orderBy, skip: 0 }, groupOrderable, "f"), after };
          const { rows, total } = await listGroups(store.db, { uidp, visible: undefined }, page);
          assert.equal(total, 23);
          seen.push(...rows.slice(0, page.limit));
          if (rows.length <= page.limit) return seen;
          const last = rows[page.limit - 1];
          after = page.order.map((o) => last[o.column as keyof GroupRow] as string | number);
        }
        throw new Error("did not end");
      }

      test("keyset pages visit every row once, in order, for every sort key", async () => {
        for (const orderBy of ["", "name", "name desc", "create_time desc, name", "update_time"]) {
          const rows = await all({ childrenOf: folder }, orderBy, 4);
          assert.equal(new Set(rows.map((r) => r.uid)).size, 23, orderBy);
          if (orderBy === "name") assert.deepEqual(rows.map((r) => r.name), [...names].sort());
          if (orderBy === "name desc") assert.deepEqual(rows.map((r) => r.name), [...names].sort().reverse());
          if (orderBy === "create_time desc, name") {
            const keys = rows.map((r) => [-r.create_time, r.name].join("|"));
            assert.deepEqual(keys, [...keys].sort((x, y) => (Number(x.split("|")[0]) - Number(y.split("|")[0])) || x.localeCompare(y)));
          }
        }
      });

      test("uidp filters, skip and visibility narrow in the query", async () => {
        const page = pager.parse({ pageSize: 5, pageToken: "", orderBy: "name", skip: 20 }, groupOrderable, "f");
        const skipped = await listGroups(store.db, { uidp: { childrenOf: folder }, visible: undefined }, page);
        assert.deepEqual(skipped.rows.map((r) => r.name), ["g20", "g21", "g22"]);
        assert.equal(skipped.total, 23);

        const first = pager.parse({ pageSize: 200, pageToken: "", orderBy: "", skip: 0 }, groupOrderable, "f");
        const count = async (uidp: UidpFilter, visible?: string[], name?: string) => (await listGroups(store.db, { uidp, visible, name }, first)).total;
        assert.equal(await count({ descendantsOf: org }), 24);
        assert.equal(await count({ childrenOf: org }), 1);
        assert.equal(await count({ descendantsOf: folder }), 23);
        assert.equal(await count({ descendantsOf: org }, [folder]), 24, "the visible folder and everything below it");
        assert.equal(await count({ descendantsOf: org }, []), 0);
        assert.equal(await count({ childrenOf: folder }, [org]), 23, "inside a visible subtree");
        assert.equal(await count({ descendantsOf: folder }, [newChildUid(org)]), 0, "disjoint from every visible subtree");
        assert.equal(await count({ childrenOf: org }, [folder]), 1, "a visible subtree below the filter's scope");
        assert.equal(await count({ ids: [org, folder] }), 2);
        assert.equal(await count({ ancestorsOf: newChildUid(folder) }), 2);
        assert.equal(await count({ ancestorsOf: org }), 0);
        assert.equal(await count({ inRoot: true, ids: [org, folder] }), 1);
        assert.equal(await count({ childrenOf: folder }, undefined, "g07"), 1);
        assert.equal(await count({ childrenOf: folder }, undefined, "G07"), 0, "name is an exact, case-sensitive match");
      });
    });

    test("grants: a binding gives its role's capabilities on the group and below", async () => {
      await syncBuiltInRoles(store.db, BUILT_IN_ROLES, 1);
      await syncBuiltInRoles(store.db, BUILT_IN_ROLES, 2);
      const org = newRootUid();
      const folder = newChildUid(org);
      await insertGroup(store.db, group(org, "", "store-org-grants", 1));
      await insertGroup(store.db, group(folder, org, "f", 1));
      const identity = newChildUid(org);
      await insertIdentity(store.db, { uid: identity, group_uid: org, name: "i", description: "", claim_match: "", static_keys: "", last_seen_time: null, create_time: 1, update_time: 1 });
      await insertRoleBinding(store.db, { uid: newChildUid(folder), group_uid: folder, identity_uid: identity, role_uid: builtInRole("viewer").uid, create_time: 1 });
      const grants = grantsFrom((await grantsOf(store.db, identity)) ?? assert.fail("the identity exists"));
      assert.ok(grants.has(folder, ["CAP_IAM_GROUPS_LIST"]));
      assert.ok(grants.has(newChildUid(folder), ["CAP_IAM_GROUPS_LIST"]));
      assert.ok(!grants.has(org, ["CAP_IAM_GROUPS_LIST"]));
      assert.ok(!grants.has(folder, ["CAP_IAM_GROUPS_DELETE"]));
      assert.deepEqual(grants.visibleRoots(["CAP_IAM_GROUPS_LIST"]), [folder]);
      const unbound = newChildUid(org);
      await insertIdentity(store.db, { uid: unbound, group_uid: org, name: "u", description: "", claim_match: "", static_keys: "", last_seen_time: null, create_time: 1, update_time: 1 });
      assert.deepEqual(await grantsOf(store.db, unbound), [], "an identity without bindings holds nothing");
      assert.equal(await grantsOf(store.db, newChildUid(org)), undefined, "a missing identity has no grants at all");
    });

    test("server secrets are created once and shared", async () => {
      const a = await serverSecret(store.db, "test-secret", () => "first", 1);
      const b = await serverSecret(store.db, "test-secret", () => "second", 2);
      assert.equal(a, "first");
      assert.equal(b, "first");
    });
  });
}
