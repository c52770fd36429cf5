import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { InUseError, StoreError } from "../../src/store/errors.js";
import { apiErrorOf } from "../../src/aip/store-errors.js";
import { ApiError } from "../../src/aip/errors.js";
import { createPager, type Page } from "../../src/aip/pagination.js";
import { newChildUid, newRootUid } from "../../src/aip/uidp.js";
import { BUILT_IN_ROLES, builtInRole } from "../../src/access/capabilities.js";
import { insertGroup } from "../../src/domains/iam/store/groups.js";
import { createIdentity, deleteIdentity, getIdentity, identityOrderable, listIdentities, updateIdentity, type IdentityRow } from "../../src/domains/iam/store/identities.js";
import {
  createRoleBinding,
  deleteRoleBinding,
  getRoleBinding,
  listRoleBindings,
  roleBindingOrderable,
  setBindingRole,
} from "../../src/domains/iam/store/role-bindings.js";
import { deleteRole, getRole, insertRole, listRoles, roleOrderable, syncBuiltInRoles, updateRole } from "../../src/domains/iam/store/roles.js";
import { openStore, type Store } from "../../src/server/open-store.js";
import { inTransaction } from "../../src/store/transaction.js";
import { dropFresh, testDatabases } from "../support/databases.js";

const kind = (e: unknown) => (e instanceof StoreError ? apiErrorOf(e).kind : e instanceof ApiError ? e.kind : String(e));

function identity(group: string, name: string, time: number): IdentityRow {
  return { uid: newChildUid(group), group_uid: group, name, description: "", claim_match: "", static_keys: "", pull_token_hash: "", pull_token_expire_time: null, last_seen_time: time, create_time: time, update_time: time };
}

/** The IAM repositories; every backend must pass unchanged. */
for (const database of await testDatabases()) {
  describe(`IAM store on ${database.name}`, { skip: database.skip }, () => {
    let store: Store;
    let url: string;
    const pager = createPager({ secret: Buffer.from("k") });
    const page = (orderable: Record<string, string>, orderBy = "", pageSize = 50): Page =>
      pager.parse({ pageSize, pageToken: "", orderBy, skip: 0 }, orderable, "f");
    const org = newRootUid();
    const a = newChildUid(org);
    const b = newChildUid(org);

    before(async () => {
      url = await database.fresh();
      store = await openStore(url);
      await syncBuiltInRoles(store.db, BUILT_IN_ROLES, 1);
      await insertGroup(store.db, { uid: org, parent_uid: "", name: `iam-${database.name}`, description: "", create_time: 1, update_time: 1 });
      for (const [uid, name] of [[a, "a"], [b, "b"]]) await insertGroup(store.db, { uid, parent_uid: org, name, description: "", create_time: 1, update_time: 1 });
    });
    after(async () => {
      await store?.close();
      await dropFresh(url);
    });

    test("grants_clock advances with every change to bindings, role capabilities and identities' deletion, in the writing transaction", async () => {
      const clock = async () => Number((await store.db.selectFrom("grants_clock").select("value").where("id", "=", 1).executeTakeFirstOrThrow()).value);
      const moves = async (what: string, change: () => Promise<unknown>) => {
        const before = await clock();
        await change();
        assert.ok((await clock()) > before, `${what} advances the clock`);
      };
      // A group of its own, so the other tests' listings do not see what this one leaves.
      const c = newChildUid(org);
      await insertGroup(store.db, { uid: c, parent_uid: org, name: "clocked", description: "", create_time: 1, update_time: 1 });
      const who = identity(c, "clocked", 1);
      const role = newChildUid(c);
      await moves("creating an identity's binding", async () => {
        await createIdentity(store.db, who);
        await createRoleBinding(store.db, { uid: newChildUid(c), group_uid: c, identity_uid: who.uid, role_uid: builtInRole("viewer").uid, create_time: 1 });
      });
      await moves("a custom role's capabilities", () => insertRole(store.db, { uid: role, group_uid: c, name: "clock-role", description: "", built_in: 0, create_time: 1, update_time: 1 }, ["CAP_REPO_LIST"]));
      await moves("changing them", () => inTransaction(store.db, undefined, (trx) => updateRole(trx, role, { name: "clock-role", description: "", update_time: 2 }, ["CAP_REPO_GET"])));
      const bound = await createRoleBinding(store.db, { uid: newChildUid(c), group_uid: c, identity_uid: who.uid, role_uid: role, create_time: 1 });
      await moves("a binding's role", () => setBindingRole(store.db, bound.uid, builtInRole("owner").uid));
      await moves("deleting a binding", () => inTransaction(store.db, undefined, (trx) => deleteRoleBinding(trx, bound.uid)));
      await moves("deleting the identity (and its bindings)", () => inTransaction(store.db, undefined, (trx) => deleteIdentity(trx, who.uid)));
      const unchanged = await clock();
      await createIdentity(store.db, identity(c, "unbound", 1));
      assert.equal(await clock(), unchanged, "an identity without bindings grants nothing: no advance");
      await assert.rejects(
        inTransaction(store.db, undefined, async (trx) => {
          await createRoleBinding(trx, { uid: newChildUid(c), group_uid: c, identity_uid: who.uid, role_uid: role, create_time: 1 });
          throw new Error("rolled back");
        }),
      );
      assert.equal(await clock(), unchanged, "a rolled-back change leaves the clock as it was");
      await moves("deleting a role (its capabilities)", () => inTransaction(store.db, undefined, (trx) => deleteRole(trx, role)));
    });

    test("identities: create under an existing group, children_of, visibility, update, delete with bindings", async () => {
      await assert.rejects(createIdentity(store.db, identity(newChildUid(org), "x", 1)), (e) => kind(e) === "NOT_FOUND");
      const one = await createIdentity(store.db, identity(a, "one", 2));
      const two = await createIdentity(store.db, identity(b, "two", 3));
      const children = await listIdentities(store.db, { uidp: { childrenOf: a }, visible: undefined }, page(identityOrderable));
      assert.deepEqual(children.rows.map((r) => r.uid), [one.uid]);
      const visible = await listIdentities(store.db, { uidp: {}, visible: [b] }, page(identityOrderable, "name desc"));
      assert.deepEqual(visible.rows.map((r) => r.uid), [two.uid]);
      assert.equal(visible.total, 1);
      const named = await listIdentities(store.db, { name: "one", uidp: {}, visible: [org] }, page(identityOrderable));
      assert.deepEqual(named.rows.map((r) => r.uid), [one.uid]);

      const changed = await updateIdentity(store.db, one.uid, { name: "uno", description: "d", claim_match: '{"issuer":"i","subject":"s"}', static_keys: "", update_time: 9 });
      assert.equal(changed.name, "uno");
      assert.equal((await getIdentity(store.db, one.uid)).claim_match, '{"issuer":"i","subject":"s"}');

      await createRoleBinding(store.db, { uid: newChildUid(a), group_uid: a, identity_uid: one.uid, role_uid: builtInRole("viewer").uid, create_time: 4 });
      await inTransaction(store.db, undefined, (trx) => deleteIdentity(trx, one.uid));
      assert.equal((await store.db.selectFrom("role_bindings").select("uid").where("identity_uid", "=", one.uid).execute()).length, 0);
      await assert.rejects(getIdentity(store.db, one.uid), (e) => kind(e) === "NOT_FOUND");
    });

    test("roles: built-ins for everyone, custom roles narrowed, unique names, capability sets, in-use refusal", async () => {
      const ra = await insertRole(store.db, { uid: newChildUid(a), group_uid: a, name: "ra", description: "", built_in: 0, create_time: 5, update_time: 5 }, ["CAP_REPO_LIST"]);
      const rb = await insertRole(store.db, { uid: newChildUid(b), group_uid: b, name: "rb", description: "", built_in: 0, create_time: 6, update_time: 6 }, []);
      await assert.rejects(
        insertRole(store.db, { uid: newChildUid(a), group_uid: a, name: "ra", description: "", built_in: 0, create_time: 7, update_time: 7 }, []),
        (e) => kind(e) === "ALREADY_EXISTS",
      );
      const none = await listRoles(store.db, { uidp: {}, visible: [] }, page(roleOrderable, "name"));
      assert.deepEqual(none.rows.map((r) => r.name), BUILT_IN_ROLES.map((r) => r.name).sort());
      assert.equal(none.total, BUILT_IN_ROLES.length);
      const inA = await listRoles(store.db, { uidp: {}, visible: [a] }, page(roleOrderable, "name", 2));
      assert.equal(inA.total, BUILT_IN_ROLES.length + 1);
      assert.equal(inA.rows.length, 3, "limit + 1 rows");
      const under = await listRoles(store.db, { uidp: { descendantsOf: org }, visible: undefined }, page(roleOrderable));
      assert.deepEqual(under.rows.map((r) => r.uid).sort(), [ra.uid, rb.uid].sort());
      assert.deepEqual((await getRole(store.db, builtInRole("owner").uid)).capabilities.length, builtInRole("owner").capabilities.length);

      const updated = await inTransaction(store.db, undefined, (trx) =>
        updateRole(trx, ra.uid, { name: "ra2", description: "d", update_time: 8 }, ["CAP_TAG_LIST", "CAP_REPO_LIST"]),
      );
      assert.deepEqual(updated.capabilities, ["CAP_REPO_LIST", "CAP_TAG_LIST"]);
      assert.deepEqual((await getRole(store.db, ra.uid)).capabilities, ["CAP_REPO_LIST", "CAP_TAG_LIST"]);

      const who = await createIdentity(store.db, identity(org, "bound", 9));
      const binding = await createRoleBinding(store.db, { uid: newChildUid(a), group_uid: a, identity_uid: who.uid, role_uid: ra.uid, create_time: 9 });
      await assert.rejects(
        inTransaction(store.db, undefined, (trx) => deleteRole(trx, ra.uid)),
        (e) => e instanceof InUseError && e.violation === "RESOURCE_IN_USE",
      );
      await deleteRoleBinding(store.db, binding.uid);
      await inTransaction(store.db, undefined, (trx) => deleteRole(trx, ra.uid));
      await assert.rejects(getRole(store.db, ra.uid), (e) => kind(e) === "NOT_FOUND");
      assert.equal((await store.db.selectFrom("role_capabilities").select("capability").where("role_uid", "=", ra.uid).execute()).length, 0);
    });

    test("role bindings: hydrated get, filters, keyset pages, duplicates, role change", async () => {
      const who = await createIdentity(store.db, { ...identity(org, "hydrated", 10), description: "desc", claim_match: '{"issuer":"https://i","subject":"s"}' });
      const other = await createIdentity(store.db, identity(org, "other", 10));
      const viewer = builtInRole("viewer").uid;
      const made = [];
      for (const [i, group] of [a, b, a].entries()) {
        const identityUid = i === 2 ? other.uid : who.uid;
        made.push(await createRoleBinding(store.db, { uid: newChildUid(group), group_uid: group, identity_uid: identityUid, role_uid: viewer, create_time: 20 + i }));
      }
      await assert.rejects(
        createRoleBinding(store.db, { uid: newChildUid(a), group_uid: a, identity_uid: who.uid, role_uid: viewer, create_time: 30 }),
        (e) => kind(e) === "ALREADY_EXISTS",
      );
      const got = await getRoleBinding(store.db, made[0].uid);
      assert.equal(got.identity_name, "hydrated");
      assert.equal(got.identity_claim_match, '{"issuer":"https://i","subject":"s"}');
      assert.equal(got.group_name, "a");
      assert.equal(got.role_name, "viewer");

      const byIdentity = await listRoleBindings(store.db, { identity: who.uid, uidp: {}, visible: undefined }, page(roleBindingOrderable, "create_time desc"));
      assert.deepEqual(byIdentity.rows.map((r) => r.uid), [made[1].uid, made[0].uid]);
      const inA = await listRoleBindings(store.db, { group: a, uidp: {}, visible: [org] }, page(roleBindingOrderable, "create_time", 1));
      assert.equal(inA.total, 2);
      assert.deepEqual(inA.rows.map((r) => r.uid), [made[0].uid, made[2].uid], "limit + 1 rows in order");
      const onlyB = await listRoleBindings(store.db, { uidp: {}, visible: [b] }, page(roleBindingOrderable));
      assert.deepEqual(onlyB.rows.map((r) => r.uid), [made[1].uid]);
      assert.equal(onlyB.total, 1);

      await setBindingRole(store.db, made[0].uid, builtInRole("editor").uid);
      assert.equal((await getRoleBinding(store.db, made[0].uid)).role_name, "editor");
      await assert.rejects(setBindingRole(store.db, newChildUid(a), viewer), (e) => kind(e) === "NOT_FOUND");
      assert.equal(await deleteRoleBinding(store.db, newChildUid(a)), false, "no binding there: nothing deleted, no error");
      assert.equal(await deleteRoleBinding(store.db, made[0].uid), true);
      assert.equal(await deleteRoleBinding(store.db, made[0].uid), false);
    });
  });
}
