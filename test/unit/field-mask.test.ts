import assert from "node:assert/strict";
import { test } from "node:test";
import { create } from "@bufbuild/protobuf";
import { AccountAssociationSchema } from "../../gen/platform/iam/v2/account_association_pb.js";
import { GroupSchema } from "../../gen/platform/iam/v2/group_pb.js";
import { ApiError } from "../../src/aip/errors.js";
import { applyFieldMask } from "../../src/aip/field-mask.js";

const current = create(GroupSchema, { uid: "u", name: "old", description: "old desc" });
const updatable = ["name", "description"];
const apply = (patch: { name?: string; description?: string; uid?: string }, paths?: string[]) =>
  applyFieldMask(GroupSchema, current, create(GroupSchema, patch), paths && { $typeName: "google.protobuf.FieldMask", paths }, updatable);

test("no mask: only the fields set in the patch change", () => {
  const next = apply({ description: "new" });
  assert.equal(next.name, "old");
  assert.equal(next.description, "new");
  assert.equal(apply({}, []).description, "old desc", "empty paths behave as no mask");
});

test("a mask changes exactly its fields and ignores the rest of the body", () => {
  const next = apply({ name: "ignored", description: "new" }, ["description"]);
  assert.equal(next.name, "old");
  assert.equal(next.description, "new");
  assert.equal(apply({}, ["description"]).description, "", "a masked field absent from the body is cleared");
  assert.equal(apply({ description: "json" }, ["description"]).description, "json");
});

test("* replaces every updatable field", () => {
  const next = apply({ name: "new" }, ["*"]);
  assert.equal(next.name, "new");
  assert.equal(next.description, "");
  assert.equal(next.uid, "u", "identifiers are not updatable");
});

test("unknown paths are refused; non-updatable ones are ignored", () => {
  assert.throws(() => apply({}, ["colour"]), (e) => e instanceof ApiError && e.fieldViolations[0].field === "update_mask");
  assert.throws(() => apply({}, ["*", "name"]), ApiError);
  assert.equal(apply({ uid: "other" }, ["uid"]).uid, "u");
  assert.equal(apply({ name: "n" }, ["name"]).name, "n");
});

test("paths reach into message fields; a message named whole is replaced whole; no mask merges set subfields", () => {
  const stored = create(AccountAssociationSchema, { uid: "u", name: "n", google: { projectId: "p", projectNumber: "1" }, amazon: { account: "a" } });
  const fields = ["name", "amazon", "google", "azure"];
  const mask = (...paths: string[]) => ({ $typeName: "google.protobuf.FieldMask" as const, paths });
  const patch = create(AccountAssociationSchema, { google: { projectNumber: "2" } });

  const leaf = applyFieldMask(AccountAssociationSchema, stored, patch, mask("google.project_number"), fields);
  assert.deepEqual([leaf.google?.projectId, leaf.google?.projectNumber, leaf.amazon?.account], ["p", "2", "a"]);
  assert.equal(applyFieldMask(AccountAssociationSchema, stored, patch, mask("google.projectNumber"), fields).google?.projectNumber, "2", "JSON names too");

  const whole = applyFieldMask(AccountAssociationSchema, stored, patch, mask("google"), fields);
  assert.deepEqual([whole.google?.projectId, whole.google?.projectNumber], ["", "2"]);
  assert.equal(applyFieldMask(AccountAssociationSchema, stored, patch, mask("amazon"), fields).amazon, undefined, "named and absent: removed");

  const merged = applyFieldMask(AccountAssociationSchema, stored, patch, undefined, fields);
  assert.deepEqual([merged.google?.projectId, merged.google?.projectNumber, merged.amazon?.account], ["p", "2", "a"]);

  const created = applyFieldMask(AccountAssociationSchema, stored, create(AccountAssociationSchema, { azure: { tenantId: "t" } }), mask("azure.tenant_id"), fields);
  assert.equal(created.azure?.tenantId, "t", "a path into an unset message creates it");

  for (const bad of ["google.colour", "name.first", "google."]) {
    assert.throws(() => applyFieldMask(AccountAssociationSchema, stored, patch, mask(bad), fields), (e) => e instanceof ApiError, bad);
  }
});
