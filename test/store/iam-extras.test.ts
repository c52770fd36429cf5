import assert from "node:assert/strict";
import { InUseError, StoreError } from "../../src/store/errors.js";
import { apiErrorOf } from "../../src/aip/store-errors.js";
import { OWNERSHIP } from "../../src/server/domains.js";
import { getRole } from "../../src/domains/iam/store/roles.js";
import { checkRoleScope } from "../../src/domains/iam/role-binding-validation.js";
import { after, before, describe, test } from "node:test";
import { ApiError } from "../../src/aip/errors.js";
import { createPager } from "../../src/aip/pagination.js";
import { newChildUid, newRootUid } from "../../src/aip/uidp.js";
import { BUILT_IN_ROLES, builtInRole } from "../../src/access/capabilities.js";
import {
  getAccountAssociation,
  insertAccountAssociation,
  listAccountAssociations,
  accountAssociationOrderable,
  type AccountAssociationRow,
} from "../../src/domains/iam/store/account-associations.js";
import {
  externalGroupRoleMappingOrderable,
  insertExternalGroupRoleMapping,
  listExternalGroupRoleMappings,
  updateExternalGroupRoleMapping,
} from "../../src/domains/iam/store/external-group-role-mappings.js";
import {
  findGroupInviteByCodeHash,
  groupInviteOrderable,
  insertGroupInvite,
  listGroupInvites,
  markGroupInviteUsed,
  type GroupInviteRow,
} from "../../src/domains/iam/store/group-invites.js";
import { deleteGroup, insertGroup } from "../../src/domains/iam/store/groups.js";
import {
  deleteIdentityProvider,
  identityProviderOrderable,
  insertIdentityProvider,
  listIdentityProviders,
  updateIdentityProvider,
  type IdentityProviderRow,
} from "../../src/domains/iam/store/identity-providers.js";
import { insertIdentity } from "../../src/domains/iam/store/identities.js";
import { syncBuiltInRoles } from "../../src/domains/iam/store/roles.js";
import { acceptTerms, listTermsAcceptances, termsAcceptanceOrderable } from "../../src/domains/iam/store/terms.js";
import { openStore, type Store } from "../../src/server/open-store.js";
import { dropFresh, testDatabases } from "../support/databases.js";

const kind = (e: unknown) => (e instanceof StoreError ? apiErrorOf(e).kind : e instanceof ApiError ? e.kind : String(e));
const notEmpty = (e: unknown) => e instanceof InUseError && e.violation === "RESOURCE_NOT_EMPTY";

function provider(uid: string, group: string, name: string, time = 1): IdentityProviderRow {
  return {
    uid,
    group_uid: group,
    name,
    description: "",
    issuer: "https://issuer.example.com",
    client_id: "c",
    client_secret: "s",
    pkce_enabled: 0,
    additional_scopes: "[]",
    groups_claim: "",
    default_role_uid: "",
    create_time: time,
    update_time: time,
  };
}

function association(group: string, name: string): AccountAssociationRow {
  return {
    uid: group,
    group_uid: group,
    name,
    description: "",
    amazon_account_id: "",
    google_project_id: "",
    google_project_number: "",
    azure_tenant_id: "",
    azure_client_ids: "{}",
    github_app_installations: "{}",
    create_time: 1,
    update_time: 1,
  };
}

function invite(uid: string, group: string, codeHash: string, singleUse = 1): GroupInviteRow {
  return { uid, group_uid: group, role_uid: builtInRole("viewer").uid, email: "", code_hash: codeHash, single_use: singleUse, expire_time: 10, used_time: null, create_time: 1, update_time: 1 };
}

for (const database of await testDatabases()) {
  describe(`IAM extras store on ${database.name}`, { skip: database.skip }, () => {
    let store: Store;
    let url: string;
    let org: string;
    let team: string;
    let sub: string;
    const pager = createPager({ secret: Buffer.from("k") });
    const page = (orderable: Record<string, string>, orderBy = "", pageSize = 50) => pager.parse({ pageSize, pageToken: "", orderBy, skip: 0 }, orderable, "f");

    before(async () => {
      url = await database.fresh();
      store = await openStore(url);
      await syncBuiltInRoles(store.db, BUILT_IN_ROLES, 1);
      org = newRootUid();
      team = newChildUid(org);
      sub = newChildUid(team);
      await insertGroup(store.db, { uid: org, parent_uid: "", name: `extras-${database.name}`, description: "", create_time: 1, update_time: 1 });
      await insertGroup(store.db, { uid: team, parent_uid: org, name: "team", description: "", create_time: 1, update_time: 1 });
      await insertGroup(store.db, { uid: sub, parent_uid: team, name: "sub", description: "", create_time: 1, update_time: 1 });
    });
    after(async () => {
      await store?.close();
      await dropFresh(url);
    });

    test("identity providers: unique names per group, visibility and uidp narrowing, delete blocked by mappings", async () => {
      const a = newChildUid(team);
      const b = newChildUid(sub);
      await insertIdentityProvider(store.db, provider(a, team, "a", 1));
      await insertIdentityProvider(store.db, provider(b, sub, "a", 2));
      await assert.rejects(insertIdentityProvider(store.db, provider(newChildUid(team), team, "a")), (e) => kind(e) === "ALREADY_EXISTS");
      await assert.rejects(insertIdentityProvider(store.db, provider(newChildUid(newChildUid(org)), newChildUid(org), "x")), (e) => kind(e) === "NOT_FOUND");
      await assert.rejects(updateIdentityProvider(store.db, newChildUid(team), { ...provider("", "", "z"), update_time: 2 }), (e) => kind(e) === "NOT_FOUND");

      const visibleSub = await listIdentityProviders(store.db, { uidp: {}, visible: [sub] }, page(identityProviderOrderable));
      assert.deepEqual(visibleSub.rows.map((r) => r.uid), [b]);
      assert.equal(visibleSub.total, 1);
      const children = await listIdentityProviders(store.db, { uidp: { childrenOf: team }, visible: undefined }, page(identityProviderOrderable));
      assert.deepEqual(children.rows.map((r) => r.uid), [a]);
      const inRoot = await listIdentityProviders(store.db, { uidp: { inRoot: true }, visible: undefined }, page(identityProviderOrderable));
      assert.equal(inRoot.total, 0);
      const byTime = await listIdentityProviders(store.db, { name: "a", uidp: { descendantsOf: org }, visible: [org] }, page(identityProviderOrderable, "create_time desc"));
      assert.deepEqual(byTime.rows.map((r) => r.uid), [b, a]);
      assert.equal((await listIdentityProviders(store.db, { uidp: {}, visible: [] }, page(identityProviderOrderable))).total, 0);

      const mapping = newChildUid(a);
      await insertExternalGroupRoleMapping(store.db, { uid: mapping, group_uid: team, identity_provider_uid: a, external_group: "admins", role_uid: builtInRole("owner").uid, create_time: 1, update_time: 1 });
      await assert.rejects(
        insertExternalGroupRoleMapping(store.db, { uid: newChildUid(a), group_uid: team, identity_provider_uid: a, external_group: "admins", role_uid: builtInRole("owner").uid, create_time: 1, update_time: 1 }),
        (e) => kind(e) === "ALREADY_EXISTS",
      );
      await assert.rejects(
        insertExternalGroupRoleMapping(store.db, { uid: newChildUid(newChildUid(team)), group_uid: team, identity_provider_uid: newChildUid(team), external_group: "x", role_uid: "r", create_time: 1, update_time: 1 }),
        (e) => kind(e) === "NOT_FOUND",
      );
      const second = newChildUid(a);
      await insertExternalGroupRoleMapping(store.db, { uid: second, group_uid: team, identity_provider_uid: a, external_group: "devs", role_uid: builtInRole("viewer").uid, create_time: 2, update_time: 2 });
      await assert.rejects(updateExternalGroupRoleMapping(store.db, second, { external_group: "admins", role_uid: builtInRole("owner").uid, update_time: 3 }), (e) => kind(e) === "ALREADY_EXISTS");
      const mappings = await listExternalGroupRoleMappings(store.db, { uidp: { childrenOf: a }, visible: [team] }, page(externalGroupRoleMappingOrderable, "external_group_id desc"));
      assert.deepEqual(mappings.rows.map((r) => r.external_group), ["devs", "admins"]);
      const mappingsInRoot = await listExternalGroupRoleMappings(store.db, { uidp: { inRoot: true }, visible: undefined }, page(externalGroupRoleMappingOrderable));
      assert.equal(mappingsInRoot.total, 0, "mappings of a folder's provider are not in root");
      assert.equal((await listExternalGroupRoleMappings(store.db, { externalGroup: "devs", uidp: {}, visible: [sub] }, page(externalGroupRoleMappingOrderable))).total, 0);

      await assert.rejects(deleteIdentityProvider(store.db, a), notEmpty);
      await deleteIdentityProvider(store.db, b);
      await assert.rejects(deleteIdentityProvider(store.db, b), (e) => kind(e) === "NOT_FOUND");
    });

    test("account associations: one per group, listed by the group's uid", async () => {
      await insertAccountAssociation(store.db, association(sub, "s"));
      await assert.rejects(insertAccountAssociation(store.db, association(sub, "again")), (e) => kind(e) === "ALREADY_EXISTS");
      await assert.rejects(insertAccountAssociation(store.db, association(newChildUid(org), "x")), (e) => kind(e) === "NOT_FOUND");
      assert.equal((await getAccountAssociation(store.db, sub)).name, "s");
      const listed = await listAccountAssociations(store.db, { uidp: { childrenOf: team }, visible: [org] }, page(accountAssociationOrderable, "name"));
      assert.deepEqual(listed.rows.map((r) => r.uid), [sub]);
      assert.equal((await listAccountAssociations(store.db, { uidp: { childrenOf: org }, visible: undefined }, page(accountAssociationOrderable))).total, 0);
    });

    test("group invites: lookup by code hash, single use marked once, roles assignable from the subtree", async () => {
      const uid = newChildUid(team);
      const hash = `${database.name}-hash-1`;
      await insertGroupInvite(store.db, invite(uid, team, hash));
      await assert.rejects(insertGroupInvite(store.db, invite(newChildUid(team), team, hash)), "code hashes are unique");
      assert.equal((await findGroupInviteByCodeHash(store.db, hash))?.uid, uid);
      assert.equal(await findGroupInviteByCodeHash(store.db, "nope"), undefined);
      assert.equal(await markGroupInviteUsed(store.db, uid, 5), true);
      assert.equal(await markGroupInviteUsed(store.db, uid, 6), false, "a second redemption loses");
      const listed = await listGroupInvites(store.db, { roleUid: builtInRole("viewer").uid, uidp: { descendantsOf: org }, visible: [team] }, page(groupInviteOrderable, "expiration_time"));
      assert.deepEqual(listed.rows.map((r) => r.uid), [uid]);
      assert.equal(listed.rows[0].used_time, 5);

      const custom = newChildUid(team);
      await store.db.insertInto("roles").values({ uid: custom, group_uid: team, name: "custom", description: "", built_in: 0, create_time: 1, update_time: 1 }).execute();
      await store.db.insertInto("role_capabilities").values({ role_uid: custom, capability: "CAP_REPO_LIST" }).execute();
      assert.deepEqual((await getRole(store.db, custom)).capabilities, ["CAP_REPO_LIST"]);
      // One rule for where a role may be granted, decided from the uid: on its group and below; built-in roles anywhere.
      checkRoleScope(sub, custom);
      assert.throws(() => checkRoleScope(org, custom), (e) => e instanceof ApiError && e.preconditionViolations[0]?.type === "ROLE_OUT_OF_SCOPE");
      checkRoleScope(org, builtInRole("owner").uid);
    });

    test("terms: idempotent acceptance, listed with ancestors' acceptances, paged", async () => {
      const identity = newChildUid(org);
      await insertIdentity(store.db, { uid: identity, group_uid: org, name: "i", description: "", claim_match: "", static_keys: "", last_seen_time: null, create_time: 1, update_time: 1 });
      const [tos] = await acceptTerms(store.db, org, ["tos"], identity, 1);
      const again = await acceptTerms(store.db, org, ["tos", "aup"], identity, 2);
      assert.equal(again[0].uid, tos.uid);
      await acceptTerms(store.db, sub, ["dpa"], identity, 3);
      await assert.rejects(acceptTerms(store.db, newChildUid(org), ["x"], identity, 1), (e) => kind(e) === "NOT_FOUND");
      const atSub = await listTermsAcceptances(store.db, { groupUid: sub }, page(termsAcceptanceOrderable, "doc_id", 2));
      assert.equal(atSub.total, 3);
      assert.deepEqual(atSub.rows.map((r) => r.doc_id), ["aup", "dpa", "tos"], "limit + 1 rows");
      const atTeam = await listTermsAcceptances(store.db, { groupUid: team, docId: "tos" }, page(termsAcceptanceOrderable));
      assert.deepEqual(atTeam.rows.map((r) => r.uid), [tos.uid]);
    });

    test("a group owning any of these resources cannot be deleted", async () => {
      for (const [name, add] of [
        ["identity provider", (g: string) => insertIdentityProvider(store.db, provider(newChildUid(g), g, "p"))],
        ["account association", (g: string) => insertAccountAssociation(store.db, association(g, "a"))],
        ["group invite", (g: string) => insertGroupInvite(store.db, invite(newChildUid(g), g, `${g}-h`))],
        ["terms acceptance", (g: string) => acceptTerms(store.db, g, ["tos"], "someone", 1)],
      ] as const) {
        const leaf = newChildUid(org);
        await insertGroup(store.db, { uid: leaf, parent_uid: org, name: `leaf ${name}`, description: "", create_time: 1, update_time: 1 });
        await add(leaf);
        await assert.rejects(deleteGroup(store.db, leaf, OWNERSHIP.ownedByGroup), notEmpty, name);
      }
    });
  });
}
