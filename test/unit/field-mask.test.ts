import assert from "node:assert/strict";
import { test } from "node:test";
import { create } from "@bufbuild/protobuf";
import { GroupSchema } from "../../gen/platform/iam/v2/group_pb.js";
import { ApiError } from "../../src/api/errors.js";
import { applyFieldMask } from "../../src/api/field-mask.js";

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
