import assert from "node:assert/strict";
import { test } from "node:test";
import { Violations } from "../../src/aip/validation.js";
import { checkImmutableTags, immutablePatternOf, matchesTagPattern } from "../../src/domains/registry/immutable-tags.js";

test("a pattern's `*` matches any run of characters, none included; every other character itself", () => {
  const cases: Array<[string, string, boolean]> = [
    ["stable", "stable", true],
    ["stable", "stable2", false],
    ["stable", "Stable", false],
    ["v*", "v", true],
    ["v*", "v1.2.3", true],
    ["v*", "av1", false],
    ["*", "anything", true],
    ["release-*", "release-2024", true],
    ["release-*", "release", false],
    ["*-rc", "1.0-rc", true],
    ["*-rc", "1.0-rc1", false],
    ["v*.*", "v1.2", true],
    ["v*.*", "v12", false],
    ["v1.*", "v1x2", false],
    ["a*b*c", "abc", true],
    ["a*b*c", "aXbYc", true],
    ["a*b*c", "acb", false],
    ["ab*ba", "aba", false],
    ["ab*ba", "abba", true],
    ["**", "", true],
  ];
  for (const [pattern, tag, expected] of cases) assert.equal(matchesTagPattern(pattern, tag), expected, `${pattern} ~ ${tag}`);
  assert.equal(immutablePatternOf(["latest", "v*", "v1*"], "v1"), "v*", "the first matching pattern is named");
  assert.equal(immutablePatternOf([], "v1"), undefined);
});

test("patterns: at most 32, each 1-128 characters of the tag alphabet and *, none repeated", () => {
  const fields = (patterns: string[]) => {
    const v = new Violations();
    checkImmutableTags(v, patterns);
    return v.list.map((x) => x.field);
  };
  assert.deepEqual(fields(["v*", "release-*", "stable", "*", "a_b.c-d", "x".repeat(128)]), []);
  assert.deepEqual(fields(["", "a b", "a/b", "ü", "x".repeat(129), "v*", "v*"]), ["repo.immutable_tags[0]", "repo.immutable_tags[1]", "repo.immutable_tags[2]", "repo.immutable_tags[3]", "repo.immutable_tags[4]", "repo.immutable_tags[6]"]);
  assert.deepEqual(fields(Array.from({ length: 32 }, (_, i) => `t${i}`)), []);
  assert.deepEqual(fields(Array.from({ length: 33 }, (_, i) => `t${i}`)), ["repo.immutable_tags"]);
});
