import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { planRetention, type RetentionInput, type RetentionRules } from "../../src/domains/registry/retention.js";

/** The retention rule (RetentionPolicy in the proto) as a table of cases over one repo. */

const DAY = 86_400_000;
const NOW = 1_800_000_000_000;
const digest = (n: number) => `sha256:${n.toString(16).padStart(64, "0")}`;
const rules = (r: Partial<RetentionRules>): RetentionRules => ({ keepLast: 0, keepTags: [], expireAfterMs: 0, untaggedGraceMs: 0, ...r });

/** 20 builds `b00` (1 day old) to `b19` (20 days), `latest` (half a day), `v1`, `v2` (400 days), `rel-1` (500 days), each its own manifest. */
function repo(): RetentionInput {
  const tags = [
    ...Array.from({ length: 20 }, (_, i) => ({ name: `b${String(i).padStart(2, "0")}`, age: (i + 1) * DAY, n: i + 1 })),
    { name: "latest", age: DAY / 2, n: 100 },
    { name: "v1", age: 400 * DAY, n: 101 },
    { name: "v2", age: 400 * DAY, n: 102 },
    { name: "rel-1", age: 500 * DAY, n: 103 },
  ];
  return {
    tags: tags.map((t) => ({ uid: `u-${t.name}`, name: t.name, digest: digest(t.n), active_time: NOW - t.age })),
    manifests: tags.map((t) => ({ digest: digest(t.n), create_time: NOW - t.age, subject_digest: "" })),
    refs: [],
    immutableTags: ["rel-*"],
  };
}
const builds = (from: number, to: number) => Array.from({ length: to - from }, (_, i) => `b${String(from + i).padStart(2, "0")}`);

const cases: Array<{ name: string; rules: Partial<RetentionRules>; deleted: string[] }> = [
  { name: "no tag rule removes no tag", rules: { keepTags: ["v*"] }, deleted: [] },
  { name: "keep_last 5 keeps the newest five (latest counts), and the immutable tag", rules: { keepLast: 5 }, deleted: [...builds(4, 20), "v1", "v2"] },
  { name: "keep_last 5 with keep_tags: patterns do not count among the five", rules: { keepLast: 5, keepTags: ["latest", "v*"] }, deleted: builds(5, 20) },
  { name: "expire_after 10 days keeps what changed within 10 days (exactly 10 days included)", rules: { expireAfterMs: 10 * DAY }, deleted: [...builds(10, 20), "v1", "v2"] },
  { name: "exactly expire_after old is kept; older goes", rules: { expireAfterMs: 20 * DAY }, deleted: ["v1", "v2"] },
  { name: "both: the newest 3 and everything of the last 10 days", rules: { keepLast: 3, expireAfterMs: 10 * DAY }, deleted: [...builds(10, 20), "v1", "v2"] },
  { name: "both: a count beyond the recent ones keeps older tags too", rules: { keepLast: 15, expireAfterMs: 2 * DAY }, deleted: [...builds(14, 20), "v1", "v2"] },
  { name: "keep_last larger than the repo keeps everything", rules: { keepLast: 1000 }, deleted: [] },
  { name: "a pattern with * in the middle", rules: { keepLast: 1, keepTags: ["b*9"] }, deleted: [...builds(0, 20).filter((t) => t !== "b09" && t !== "b19"), "v1", "v2"] },
];

describe("planRetention: which tags go", () => {
  for (const c of cases) {
    test(c.name, () => {
      const plan = planRetention(rules(c.rules), repo(), NOW);
      assert.deepEqual(plan.deleteTags.map((t) => t.name), [...c.deleted].sort());
      assert.equal(plan.keptTags, 24 - c.deleted.length);
      assert.ok(!plan.deleteTags.some((t) => t.name === "rel-1"), "an immutable tag always stays");
    });
  }

  test("ties in update time are broken by name", () => {
    const input = repo();
    const tags = ["c", "a", "b"].map((name) => ({ uid: name, name, digest: digest(1), active_time: NOW - DAY }));
    const plan = planRetention(rules({ keepLast: 2 }), { ...input, tags, immutableTags: [] }, NOW);
    assert.deepEqual(plan.deleteTags.map((t) => t.name), ["c"]);
  });
});

describe("planRetention: which untagged manifests go", () => {
  /** Images 1 (tagged `keep`), 2 (untagged, old), 3 (untagged, recent), an old untagged index 10 of 2 and 4, a referrer 20 of 1, a referrer 21 of 2, a tagged referrer 22 of 5. */
  function graph(): RetentionInput {
    const m = (n: number, age: number, subject = 0) => ({ digest: digest(n), create_time: NOW - age, subject_digest: subject === 0 ? "" : digest(subject) });
    return {
      tags: [
        { uid: "t1", name: "keep", digest: digest(1), active_time: NOW },
        { uid: "t22", name: "sig", digest: digest(22), active_time: NOW },
      ],
      manifests: [m(1, 9 * DAY), m(2, 9 * DAY), m(3, DAY / 24), m(4, 9 * DAY), m(5, 9 * DAY), m(10, 9 * DAY), m(20, 9 * DAY, 1), m(21, 9 * DAY, 2), m(22, 9 * DAY, 5)],
      refs: [
        { parent_digest: digest(10), child_digest: digest(2) },
        { parent_digest: digest(10), child_digest: digest(4) },
      ],
      immutableTags: [],
    };
  }

  test("no grace: no untagged manifest goes", () => {
    assert.deepEqual(planRetention(rules({}), graph(), NOW).deleteManifests, []);
  });

  test("old and unreachable go; tagged, recent, referrers of kept ones and subjects of tagged referrers stay", () => {
    const plan = planRetention(rules({ untaggedGraceMs: DAY }), graph(), NOW);
    assert.deepEqual(plan.deleteManifests, [digest(2), digest(4), digest(10), digest(21)].sort());
  });

  test("a recent untagged index keeps the images it names, however old, and their referrers", () => {
    const input = graph();
    input.manifests = input.manifests.map((m) => (m.digest === digest(10) ? { ...m, create_time: NOW - 60_000 } : m));
    const plan = planRetention(rules({ untaggedGraceMs: DAY }), input, NOW);
    assert.deepEqual(plan.deleteManifests, []);
  });

  test("a tag removed by the same pass leaves its manifest to go", () => {
    const input = graph();
    input.tags = [...input.tags, { uid: "old", name: "old", digest: digest(4), active_time: NOW - 30 * DAY }];
    const plan = planRetention(rules({ expireAfterMs: 7 * DAY, keepTags: ["keep", "sig"], untaggedGraceMs: DAY }), input, NOW);
    assert.deepEqual(plan.deleteTags.map((t) => t.name), ["old"]);
    assert.ok(plan.deleteManifests.includes(digest(4)));
  });
});
