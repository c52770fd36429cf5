import assert from "node:assert/strict";
import { test } from "node:test";
import { ApiError } from "../../src/aip/errors.js";
import { createPager, PAGE_TOKEN_LIFETIME_MS, parseOrderBy } from "../../src/aip/pagination.js";

const orderable = { name: "name", create_time: "create_time", created_at: "create_time" };
const base = { pageSize: 0, pageToken: "", orderBy: "", skip: 0 };

function violationOf(fn: () => unknown): string {
  try {
    fn();
  } catch (error) {
    assert.ok(error instanceof ApiError);
    assert.equal(error.kind, "INVALID_ARGUMENT");
    return error.fieldViolations[0].field;
  }
  assert.fail("expected INVALID_ARGUMENT");
}

test("page size: 0 means 50, above 200 is cut, negative is refused", () => {
  const pager = createPager({ secret: Buffer.from("s") });
  assert.equal(pager.parse(base, orderable, "f").limit, 50);
  assert.equal(pager.parse({ ...base, pageSize: 7 }, orderable, "f").limit, 7);
  assert.equal(pager.parse({ ...base, pageSize: 1000 }, orderable, "f").limit, 200);
  assert.equal(violationOf(() => pager.parse({ ...base, pageSize: -1 }, orderable, "f")), "page_size");
  assert.equal(violationOf(() => pager.parse({ ...base, skip: -1 }, orderable, "f")), "skip");
});

test("order_by: fields, directions, aliases, uid tie-breaker, allow-list", () => {
  assert.deepEqual(parseOrderBy("", orderable), [{ column: "uid", desc: false }]);
  assert.deepEqual(parseOrderBy("name desc, created_at", orderable), [
    { column: "name", desc: true },
    { column: "create_time", desc: false },
    { column: "uid", desc: false },
  ]);
  assert.deepEqual(parseOrderBy("uid desc", orderable), [{ column: "uid", desc: true }]);
  for (const bad of ["colour", "name sideways", "name desc extra", "name, name"]) {
    assert.equal(violationOf(() => parseOrderBy(bad, orderable)), "order_by", bad);
  }
});

test("page tokens carry the position and are bound to the request", () => {
  let now = 1_000_000;
  const pager = createPager({ secret: Buffer.from("secret"), now: () => now });
  const page = pager.parse({ ...base, pageSize: 2, orderBy: "name" }, orderable, "fp");
  const rows = [
    { uid: "u1", name: "a" },
    { uid: "u2", name: "b" },
    { uid: "u3", name: "c" },
  ];
  const token = pager.nextToken(page, rows, (r, c) => r[c as "uid" | "name"], "fp", 3, "seen");
  assert.notEqual(token, "");
  assert.equal(pager.nextToken(page, rows.slice(0, 2), (r, c) => r[c as "uid" | "name"], "fp", 3, "seen"), "", "no extra row: last page");

  const next = pager.parse({ ...base, pageSize: 2, orderBy: "name", pageToken: token }, orderable, "fp", "seen");
  assert.deepEqual(next.after, ["b", "u2"]);
  assert.equal(page.total, undefined, "a first page counts");
  assert.equal(next.total, 3, "later pages carry the first page's total (AIP-158)");
  const parse = (audience?: string) => pager.parse({ ...base, pageSize: 2, orderBy: "name", pageToken: token }, orderable, "fp", audience);
  assert.equal(parse("other").total, undefined, "another audience counts for itself");
  assert.equal(parse(undefined).total, undefined, "no audience: every page counts");
  assert.deepEqual(parse("other").after, ["b", "u2"], "the position holds for any audience");
  const unshared = pager.nextToken(page, rows, (r, c) => r[c as "uid" | "name"], "fp", 3);
  assert.equal(pager.parse({ ...base, pageSize: 2, orderBy: "name", pageToken: unshared }, orderable, "fp", "seen").total, undefined, "a token made without an audience carries no total");

  assert.equal(violationOf(() => pager.parse({ ...base, pageToken: token, orderBy: "name" }, orderable, "other")), "page_token");
  for (const at of [0, 20, token.length - 2]) {
    const tampered = token.slice(0, at) + (token[at] === "A" ? "B" : "A") + token.slice(at + 1);
    assert.equal(violationOf(() => pager.parse({ ...base, pageToken: tampered, orderBy: "name" }, orderable, "fp")), "page_token", `changed at ${at}`);
  }
  assert.equal(violationOf(() => pager.parse({ ...base, pageToken: "garbage", orderBy: "name" }, orderable, "fp")), "page_token");
  const otherSecret = createPager({ secret: Buffer.from("another"), now: () => now });
  assert.equal(violationOf(() => otherSecret.parse({ ...base, pageToken: token, orderBy: "name" }, orderable, "fp")), "page_token");

  // AIP-158: opaque. The token shows nothing of the position or the request, and never repeats.
  const opened = Buffer.from(token, "base64url").toString("latin1");
  for (const secret of ["u2", '"b"', "fp", '"k"', '"n"', "seen"]) assert.equal(opened.includes(secret), false, secret);
  assert.notEqual(pager.nextToken(page, rows, (r, c) => r[c as "uid" | "name"], "fp", 3, "seen"), token);

  now += PAGE_TOKEN_LIFETIME_MS + 1;
  const restarted = pager.parse({ ...base, pageToken: token, orderBy: "name" }, orderable, "fp", "seen");
  assert.equal(restarted.after, undefined, "a token older than 3 days restarts from the first page");
  assert.equal(restarted.total, undefined, "and counts again");
});
