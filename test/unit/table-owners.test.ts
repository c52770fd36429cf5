// Each table has one owner (scripts/check-table-owners.mjs, part of `npm run check`): it holds on
// src/, and each way of naming another domain's table, planted in a small tree of the same shape,
// is caught while a domain's own tables, the kit's parameters, a migration's foreign key and a migration moving rows
// into the store's own tables are not.
import assert from "node:assert/strict";
import { test } from "node:test";
import { inRepo } from "../support/repo.js";

interface TableOwnersCheck {
  tableOwners(root: string): Map<string, string>;
  tableOwnerViolations(root: string): string[];
}

const check = (await import(inRepo("scripts/check-table-owners.mjs"))) as TableOwnersCheck;

test("no domain of src/ names another domain's table", () => {
  assert.deepEqual(check.tableOwnerViolations(inRepo()), []);
});

test("the owners are read from the interfaces Database extends", () => {
  const owners = check.tableOwners(inRepo());
  assert.equal(owners.get("groups"), "iam");
  assert.equal(owners.get("repos"), "registry");
  assert.equal(owners.get("report_jobs"), "registry");
  assert.equal(owners.get("advisories"), "vulnerabilities");
  assert.equal(owners.get("signing_keys"), "store");
  assert.deepEqual(Object.fromEntries(check.tableOwners(inRepo("test/fixtures/table-owners"))), {
    signing_keys: "store",
    groups: "iam",
    role_bindings: "iam",
    repos: "registry",
    tags: "registry",
  });
});

test("another domain's table named in a tree of src/'s shape is caught in each form", () => {
  assert.deepEqual(check.tableOwnerViolations(inRepo("test/fixtures/table-owners")), [
    "src/domains/registry/migrations/2026-01-01-0001-repos.ts:4: registry names iam's table groups",
    "src/domains/registry/module.ts:2: registry names iam's table role_bindings",
    "src/domains/registry/store/planted.ts:3: registry names iam's table groups",
    "src/domains/registry/store/planted.ts:4: registry names iam's table role_bindings",
    "src/domains/registry/store/planted.ts:5: registry names iam's table groups",
    "src/domains/registry/store/planted.ts:6: registry names store's table signing_keys",
    "src/domains/registry/store/planted.ts:7: registry names iam's table groups",
    "src/domains/registry/store/planted.ts:8: registry names iam's table groups",
    "src/domains/registry/store/planted.ts:9: registry names iam's table groups",
  ]);
});
