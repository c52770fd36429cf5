// OSV `affected[]` evaluation, case by case after the schema's "Evaluation" pseudocode and its
// examples (https://ossf.github.io/osv-schema/#evaluation, #examples).
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { evaluateAffected, isVulnerable, matchAffected } from "../../src/engines/advisories/affected.js";
import { InvalidVersionError, UnknownEcosystemError } from "../../src/engines/advisories/errors.js";
import type { OsvAffected, OsvEvent, OsvRange, OsvRecord } from "../../src/engines/advisories/osv/record.js";

const semver = (...events: OsvEvent[]): OsvRange => ({ type: "SEMVER", events });
const ecosystem = (...events: OsvEvent[]): OsvRange => ({ type: "ECOSYSTEM", events });

/** Asserts which probe versions a single `affected` entry includes. */
function assertAffected(eco: string, entry: OsvAffected, affected: string[], unaffected: string[]): void {
  for (const v of affected) assert.equal(evaluateAffected(eco, v, entry).affected, true, `${v} should be affected`);
  for (const v of unaffected) assert.equal(evaluateAffected(eco, v, entry).affected, false, `${v} should not be affected`);
}

describe("OSV range evaluation", () => {
  test('introduced "0" alone: every version (Unfixed vulnerability example)', () => {
    assertAffected("npm", { ranges: [semver({ introduced: "0" })] }, ["0.0.0", "0.0.0-0", "1.0.0", "99.0.0"], []);
  });

  test('introduced "0", fixed: everything before the fix (Fixed vulnerability example)', () => {
    assertAffected("npm", { ranges: [semver({ introduced: "0" }, { fixed: "1.0.2" })] }, ["0.0.1", "1.0.1", "1.0.2-rc.1"], [
      "1.0.2",
      "1.0.3",
      "2.0.0",
    ]);
  });

  test("introduced is inclusive, fixed exclusive; several pairs in one range (Multiple range example)", () => {
    const entry = {
      ranges: [semver({ introduced: "1.0.0" }, { fixed: "1.0.2" }, { introduced: "3.0.0" }, { fixed: "3.2.5" })],
    };
    assertAffected("npm", entry, ["1.0.0", "1.0.1", "3.0.0", "3.2.4"], ["0.9.9", "1.0.0-rc.1", "1.0.2", "2.9.9", "3.2.5", "4.0.0"]);
  });

  test("last_affected is inclusive (last_affected vs fixed example)", () => {
    const entry = { ranges: [ecosystem({ introduced: "0" }, { last_affected: "2.1.214" })] };
    assertAffected("Maven", entry, ["1.0", "2.1.214", "2.1.214.0"], ["2.1.215", "2.2"]);
    const fixed = { ranges: [semver({ introduced: "0" }, { fixed: "2.1.214" })] };
    assertAffected("crates.io", fixed, ["2.1.213"], ["2.1.214"]);
  });

  test("limit bounds the range from above, exclusive; several limits widen it; * is infinity", () => {
    assertAffected("npm", { ranges: [semver({ introduced: "1.0.0" }, { limit: "2.0.0" })] }, ["1.0.0", "1.9.9"], ["0.9.0", "2.0.0", "3.0.0"]);
    const two = { ranges: [semver({ introduced: "1.0.0" }, { limit: "1.5.0" }, { limit: "3.0.0" })] };
    assertAffected("npm", two, ["1.0.0", "2.5.0"], ["3.0.0", "0.1.0"]);
    assertAffected("npm", { ranges: [semver({ introduced: "1.0.0" }, { limit: "*" })] }, ["1.0.0", "100.0.0"], ["0.1.0"]);
    // the limit applies even after a fixed event: a fixed range below the limit stays fixed
    const fixedThenLimit = { ranges: [semver({ introduced: "1.0.0" }, { fixed: "1.2.0" }, { limit: "5.0.0" })] };
    assertAffected("npm", fixedThenLimit, ["1.1.0"], ["1.2.0", "4.0.0", "5.0.0"]);
  });

  test("unsorted events are sorted by version before the walk", () => {
    const entry = {
      ranges: [semver({ fixed: "3.2.5" }, { introduced: "1.0.0" }, { introduced: "3.0.0" }, { fixed: "1.0.2" })],
    };
    assertAffected("npm", entry, ["1.0.1", "3.1.0"], ["0.5.0", "1.0.2", "2.0.0", "3.2.5"]);
    const eco = { ranges: [ecosystem({ fixed: "1.0-r2" }, { introduced: "0" })] };
    assertAffected("Alpine:v3.18", eco, ["1.0-r1", "0.9"], ["1.0-r2", "1.1"]);
  });

  test("ties keep the record's order: fixed X then introduced X reopens the range at X", () => {
    const reopened = { ranges: [semver({ introduced: "1.0.0" }, { fixed: "2.0.0" }, { introduced: "2.0.0" }, { fixed: "3.0.0" })] };
    assertAffected("npm", reopened, ["1.0.0", "2.0.0", "2.5.0"], ["3.0.0"]);
    const empty = { ranges: [semver({ introduced: "2.0.0" }, { fixed: "2.0.0" })] };
    assertAffected("npm", empty, [], ["1.0.0", "2.0.0", "3.0.0"]);
  });

  test("ranges are OR'ed", () => {
    const entry = {
      ranges: [semver({ introduced: "1.0.0" }, { fixed: "1.1.0" }), semver({ introduced: "2.0.0" }, { fixed: "2.1.0" })],
    };
    assertAffected("crates.io", entry, ["1.0.5", "2.0.5"], ["1.1.0", "1.5.0", "2.1.0"]);
  });

  test("the versions list counts on its own, and is matched under the ecosystem's equality", () => {
    const entry = { versions: ["1.0", "2.0.post1"], ranges: [ecosystem({ introduced: "3.0" }, { fixed: "3.1" })] };
    assertAffected("PyPI", entry, ["1.0", "1.0.0", "2.0.post1", "2.0-1", "3.0"], ["1.1", "2.0", "3.1"]);
    assert.equal(evaluateAffected("PyPI", "1.0", entry).matchedBy, "versions");
    assert.equal(evaluateAffected("PyPI", "3.0.1", entry).matchedBy, "ranges");
    assert.equal(evaluateAffected("PyPI", "1.1", entry).matchedBy, undefined);
    // a listed string that is not a version of the ecosystem still matches itself exactly
    assertAffected("npm", { versions: ["1.0.0", "not-semver"] }, ["1.0.0", "1.0.0+build"], ["1.0.1"]);
  });

  test("GIT ranges are skipped: only the versions list speaks for them", () => {
    const git: OsvRange = { type: "GIT", repo: "https://github.com/owner/repo", events: [{ introduced: "0" }] };
    assertAffected("Go", { ranges: [git] }, [], ["v1.0.0"]);
    assertAffected("Go", { ranges: [git], versions: ["v1.0.0"] }, ["v1.0.0", "1.0.0"], ["v1.0.1"]);
    assert.deepEqual(evaluateAffected("Go", "v1.0.0", { ranges: [git] }).unevaluable, []);
  });

  test("Go: SEMVER bounds without the v match go.mod versions with it", () => {
    const entry = { ranges: [semver({ introduced: "0" }, { fixed: "0.0.0-20220314234659-1baeb1ce4c0b" })] };
    assertAffected("Go", entry, ["v0.0.0-20210101000000-abcdefabcdef"], ["v0.0.0-20220314234659-1baeb1ce4c0b", "v0.1.0"]);
  });

  test("each ecosystem's ordering drives ECOSYSTEM ranges", () => {
    assertAffected("Debian:12", { ranges: [ecosystem({ introduced: "0" }, { fixed: "3.0.11-1~deb12u2" })] }, ["3.0.11-1~deb12u1", "3.0.9-1", "3.0.11-1~deb12u2~"], [
      "3.0.11-1~deb12u2",
      "3.0.11-1",
      "1:1.0-1",
    ]);
    assertAffected("Alpine:v3.18", { ranges: [ecosystem({ introduced: "3.1.0-r0" }, { fixed: "3.1.4-r1" })] }, ["3.1.0-r0", "3.1.4", "3.1.4-r0", "3.1.4_rc1-r5"], [
      "3.0.9-r0",
      "3.1.4-r1",
      "3.1.4_p1-r0",
    ]);
    assertAffected("Maven", { ranges: [ecosystem({ introduced: "2.0.0" }, { fixed: "2.15.0" })] }, ["2.0.0", "2.14.1", "2.15.0-rc1"], ["2.0.0-beta9", "2.15.0", "2.15"]);
    assertAffected("PyPI", { ranges: [ecosystem({ introduced: "0" }, { fixed: "2.2.3" })] }, ["2.2.2", "2.2.3rc1", "2.2.3.dev0"], ["2.2.3", "2.2.3.post1"]);
  });
});

describe("malformed records", () => {
  test("a range with an unparseable bound is unevaluable: it includes nothing and is reported", () => {
    const entry = {
      ranges: [semver({ introduced: "0" }, { fixed: "1.2" }), semver({ introduced: "2.0.0" }, { fixed: "2.1.0" })],
    };
    const verdict = evaluateAffected("npm", "1.0.0", entry);
    assert.equal(verdict.affected, false);
    assert.deepEqual(verdict.unevaluable, [{ range: 0, reason: 'fixed "1.2" is not a valid SemVer version' }]);
    // the other range still counts
    assert.equal(evaluateAffected("npm", "2.0.5", entry).affected, true);
    assert.equal(evaluateAffected("npm", "2.0.5", entry).unevaluable.length, 1);
  });

  test("an event with zero or several fields, an unknown range type, a SEMVER range the version cannot be read in", () => {
    const reasons = (eco: string, v: string, range: OsvRange): string[] =>
      evaluateAffected(eco, v, { ranges: [range] }).unevaluable.map((u) => u.reason);
    // records that did not go through parseOsvRecord can break its types
    const loose = (value: unknown): OsvEvent => value as OsvEvent;
    assert.match(reasons("npm", "1.0.0", semver(loose({ introduced: "0", fixed: "1.0.1" })))[0], /exactly one/);
    assert.match(reasons("npm", "1.0.0", semver(loose({})))[0], /exactly one/);
    assert.match(reasons("npm", "1.0.0", semver(loose({ introduced: 1 })))[0], /introduced is not a string/);
    assert.match(reasons("npm", "1.0.0", { type: "RPM", events: [{ introduced: "0" }] } as unknown as OsvRange)[0], /unknown range type "RPM"/);
    assert.match(reasons("npm", "1.0.0", { type: "SEMVER" } as unknown as OsvRange)[0], /no events/);
    assert.match(reasons("PyPI", "1.0.post1", semver({ introduced: "0" }))[0], /"1.0.post1" is not a SemVer version/);
    assert.deepEqual(reasons("PyPI", "1.0.0", semver({ introduced: "0" })), []);
  });

  test("a range with no introduced event includes nothing (the walk never turns on)", () => {
    assertAffected("npm", { ranges: [semver({ fixed: "1.0.0" })] }, [], ["0.1.0", "1.0.0", "2.0.0"]);
  });

  test("an entry without ranges or versions includes nothing", () => {
    assertAffected("npm", {}, [], ["1.0.0"]);
  });
});

describe("the caller's package and version", () => {
  const record: OsvRecord = {
    id: "TEST-1",
    modified: "2026-01-01T00:00:00Z",
    affected: [
      { package: { ecosystem: "PyPI", name: "Jinja2" }, ranges: [ecosystem({ introduced: "0" }, { fixed: "2.11.3" })] },
      { package: { ecosystem: "npm", name: "jinja2" }, ranges: [semver({ introduced: "0" })] },
      { package: { ecosystem: "Packagist", name: "jinja2" }, ranges: [ecosystem({ introduced: "0" })] },
    ],
  };

  test("isVulnerable: an entry for the same package (PEP 503 names for PyPI) at an affected version", () => {
    assert.equal(isVulnerable({ ecosystem: "PyPI", name: "jinja2", version: "2.11.2" }, record), true);
    assert.equal(isVulnerable({ ecosystem: "PyPI", name: "jinja2", version: "2.11.3" }, record), false);
    assert.equal(isVulnerable({ ecosystem: "PyPI", name: "flask", version: "1.0" }, record), false);
    assert.equal(isVulnerable({ ecosystem: "npm", name: "jinja2", version: "9.9.9" }, record), true);
    assert.equal(isVulnerable({ ecosystem: "npm", name: "Jinja2", version: "9.9.9" }, record), false);
  });

  test("matchAffected: another package is simply not affected", () => {
    assert.deepEqual(matchAffected({ ecosystem: "npm", name: "jinja2", version: "1.0.0" }, record.affected![0]), {
      affected: false,
      unevaluable: [],
    });
  });

  test("Alpine releases: an entry for another release does not apply", () => {
    const entry = { package: { ecosystem: "Alpine:v3.19", name: "openssl" }, ranges: [ecosystem({ introduced: "0" }, { fixed: "3.1.4-r1" })] };
    assert.equal(matchAffected({ ecosystem: "Alpine:v3.19", name: "openssl", version: "3.1.4-r0" }, entry).affected, true);
    assert.equal(matchAffected({ ecosystem: "Alpine:v3.18", name: "openssl", version: "3.1.4-r0" }, entry).affected, false);
  });

  test("the caller's malformed version or unknown ecosystem is a typed error, even with nothing to match", () => {
    assert.throws(() => isVulnerable({ ecosystem: "npm", name: "x", version: "1.0" }, { affected: [] }), InvalidVersionError);
    assert.throws(() => isVulnerable({ ecosystem: "Hackage", name: "x", version: "1.0" }, record), UnknownEcosystemError);
    assert.throws(() => matchAffected({ ecosystem: "PyPI", name: "x", version: "latest" }, record.affected![0]), InvalidVersionError);
    assert.throws(() => evaluateAffected("npm", "v1.0.0", {}), InvalidVersionError);
  });
});
