import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { create } from "@bufbuild/protobuf";
import { UidpFilterSchema, type UidpFilter } from "../../gen/platform/common/v1/uidp_pb.js";
import { ApiError, resourceNotEmpty as apiResourceNotEmpty, notFound } from "../../src/aip/errors.js";
import { deleteV1, listAll, v1Field } from "../../src/aip/v1/index.js";
import { resourceNotEmpty } from "../../src/store/errors.js";

const A = "a".repeat(40);
const B = "b".repeat(40);

/** A v2 List over `items` (uids), pages of `pageSize`, recording the uidp filters it was given. */
function fakeList(items: string[]) {
  const seen: UidpFilter[] = [];
  const read = async (uidp: UidpFilter, page: { pageSize: number; pageToken: string }) => {
    seen.push(uidp);
    const start = Number(page.pageToken || "0");
    const end = start + page.pageSize;
    return { items: items.slice(start, end), nextPageToken: end < items.length ? String(end) : "" };
  };
  return { read, seen };
}

describe("listAll (a v1 List over v2 pages)", () => {
  test("reads every page, in order", async () => {
    const items = Array.from({ length: 450 }, (_, i) => `${A}/${i.toString(16).padStart(16, "0")}`);
    const { read, seen } = fakeList(items);
    assert.deepEqual(await listAll({ id: "" }, read), items);
    assert.equal(seen.length, 3, "pages of 200");
  });

  test("an id narrows the uidp filter to it; with uidp.ids it must be among them", async () => {
    const { read, seen } = fakeList([]);
    await listAll({ id: A, uidp: { descendantsOf: B } }, read);
    assert.deepEqual(seen[0], create(UidpFilterSchema, { descendantsOf: B, ids: [A] }));
    const before = seen.length;
    assert.deepEqual(await listAll({ id: A, uidp: { ids: [B] } }, read), [], "id outside uidp.ids: empty");
    assert.equal(seen.length, before, "without a read");
    await listAll({ id: A, uidp: { ids: [B, A] } }, read);
    assert.deepEqual(seen.at(-1)?.ids, [A]);
  });

  test("an id that is not a uid is INVALID_ARGUMENT on id", async () => {
    const { read } = fakeList([]);
    await assert.rejects(listAll({ id: "x" }, read), (e: ApiError) => e.kind === "INVALID_ARGUMENT" && e.fieldViolations[0].field === "id");
  });

  test("more than the maximum is FAILED_PRECONDITION / TOO_MANY_RESULTS", async () => {
    const { read } = fakeList(Array.from({ length: 11 }, () => A));
    assert.equal((await listAll({ id: "" }, read, 11)).length, 11);
    await assert.rejects(listAll({ id: "" }, read, 10), (e: ApiError) => e.kind === "FAILED_PRECONDITION" && e.preconditionViolations[0].type === "TOO_MANY_RESULTS");
  });
});

describe("deleteV1 (a v1 Delete over the v2 one)", () => {
  test("a refused delete loses its cause, from the store or the API", async () => {
    for (const cause of [resourceNotEmpty("group", A), apiResourceNotEmpty("group", A)]) {
      await assert.rejects(
        deleteV1("group", A, () => Promise.reject(cause)),
        (e: ApiError) => e.kind === "FAILED_PRECONDITION" && e.preconditionViolations.length === 0 && e.message === `Precondition failed: group ${A} cannot be deleted`,
      );
    }
  });

  test("every other outcome is the v2 one", async () => {
    const missing = notFound("group", A);
    await assert.rejects(deleteV1("group", A, () => Promise.reject(missing)), (e) => e === missing);
    assert.equal((await deleteV1("group", A, async () => undefined)).$typeName, "google.protobuf.Empty");
  });
});

describe("v1Field (v2 field paths named as the v1 request names them)", () => {
  const renames = { identity: "", parent: "parent_id", "role_binding.identity_uid": "role_binding.identity", "identity.static_keys": "static" };
  for (const [v2, v1] of [
    ["identity.name", "name"],
    ["identity", ""],
    ["identity.static_keys.issuer", "static.issuer"],
    ["identity.claim_match.claims[\"a\"]", "claim_match.claims[\"a\"]"],
    ["parent", "parent_id"],
    ["parent_uid", "parent_uid"],
    ["role_binding.identity_uid", "role_binding.identity"],
    ["identities", "identities"],
  ] as const) {
    test(`${v2} -> ${v1 || "(the request)"}`, () => assert.equal(v1Field(v2, renames), v1));
  }
});
