// Debian (dpkg) version ordering. Cases from dpkg's own tests (guillemj/dpkg,
// lib/dpkg/t/t-version.c: test_version_compare, test_version_parse), the examples of Debian Policy
// 5.6.12 ("~~ < ~~a < ~ < (nothing) < a"), and pairs each checked with
// `dpkg --compare-versions` (dpkg 1.21) when this table was written.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { compareVersions, isValidVersion } from "../../src/engines/advisories/ecosystems.js";
import { compareDebianPart } from "../../src/engines/advisories/versions/debian.js";

const cmp = (a: string, b: string): number => compareVersions("Debian", a, b);

/** [a, b, sign of a compared to b] */
const TABLE: [string, string, number][] = [
  // t-version.c test_version_compare
  ["0:0-0", "0:0-0", 0],
  ["0-00", "00-0", 0],
  ["1:2-3", "1:2-3", 0],
  ["0:0-0", "1:0-0", -1],
  ["0:1a-0", "0:1b-0", -1], // t-version.c compares the bare parts "a" and "b", see below
  ["0:0-a", "0:0-b", -1],
  ["1-1", "2-1", -1],
  ["1-1", "1-2", -1],
  // t-version.c test_version_parse: the same version spelled differently
  ["0", "0:0", 0],
  ["0:0-0", "0-0", 0],
  ["1:0", "1:0", 0],
  ["0:0-0-0", "0-0-0", 0],
  ["0:0:0-0", "0:0:0-0", 0],
  // epochs first
  ["1:0.1", "2.0", 1],
  ["1:1.0", "2:0.1", -1],
  ["10:1", "9:2", 1],
  // ~ sorts before everything, even the end (Debian Policy 5.6.12)
  ["1.0~rc1", "1.0", -1],
  ["1.0~~", "1.0~~a", -1],
  ["1.0~~a", "1.0~", -1],
  ["1.0~", "1.0", -1],
  ["1.0", "1.0a", -1],
  ["1.0~rc1", "1.0~rc2", -1],
  ["2.30-1~bpo11+1", "2.30-1", -1],
  // letters before non-letters
  ["1.0a", "1.0+", -1],
  ["1.0+", "1.0.", -1],
  ["1.0a", "1.0.", -1],
  // digit runs numerically, leading zeros ignored
  ["1.2.3", "1.2.10", -1],
  ["2.30-1", "2.4-1", 1],
  ["1.001", "1.1", 0],
  ["1.0", "1.00", 0],
  ["20240101", "9", 1],
  // the revision after the upstream version; no revision is the lowest
  ["1.0", "1.0-0", 0],
  ["1.0", "1.0-1", -1],
  ["1.0-1", "1.0-1ubuntu1", -1],
  ["1.0.3-3", "1.0-1", 1],
  ["7.6p2-4", "7.6-0", 1],
  ["1.1.6r2-2", "1.1.6r-1", 1],
  ["2.6b2-1", "2.6b-2", 1],
  ["98.1p5-1", "98.1-pre2-b6-2", -1],
  ["0.4a6-2", "0.4-1", 1],
  ["1:3.0.5-2", "1:3.0.5.1", -1],
  ["4.3.90-pre1-1", "4.3.9.1-1", 1],
  ["0-pre", "0-pree", -1],
  // real Debian security versions
  ["3.0.11-1~deb12u2", "3.0.11-1~deb12u1", 1],
  ["3.0.11-1~deb12u2", "3.0.11-1", -1],
  ["1:9.18.24-1", "1:9.18.19-1~deb12u1", 1],
  ["2.36-9+deb12u4", "2.36-9+deb12u10", -1],
];

describe("Debian version ordering", () => {
  test("dpkg's comparison", () => {
    for (const [a, b, sign] of TABLE) {
      assert.equal(cmp(a, b), sign, `${a} vs ${b}`);
      assert.equal(cmp(b, a), 0 - sign, `${b} vs ${a}`);
    }
  });

  test("verrevcmp on bare parts, as t-version.c builds them", () => {
    assert.ok(compareDebianPart("a", "b") < 0);
    assert.ok(compareDebianPart("b", "a") > 0);
    assert.equal(compareDebianPart("0", "00"), 0);
    assert.equal(compareDebianPart("", ""), 0);
    assert.ok(compareDebianPart("~", "") < 0);
  });

  test("dpkg's parse rules (warnings count as errors)", () => {
    // t-version.c: valid characters in the upstream version and the revision
    for (const v of ["0", "0:0", "0:0-0", "0:09azAZ.-+~:-0", "0:0-azAZ09.+~", "1:2.30-1~bpo11+1", "2147483647:1"]) {
      assert.equal(isValidVersion("Debian", v), true, v);
    }
    const invalid = [
      "", // empty
      "  ", // blank
      "0:", // empty upstream after the epoch
      "0:0 0-1", // embedded blank
      " 0:0-1", // dpkg trims surrounding blanks; a stored version has none
      "-1:0-1", // negative epoch
      "999999999999999999999999:0-1", // huge epoch
      "2147483648:1", // epoch above INT_MAX
      "a:0-0", // letter in the epoch
      "-0", // empty upstream
      "0:-0",
      "0:abc3-0", // upstream does not start with a digit (a dpkg warning)
      "0:0-0:0", // colon in the revision
      "1.0-", // empty revision (dpkg 1.21: "revision number is empty")
    ];
    for (const v of invalid) assert.equal(isValidVersion("Debian", v), false, JSON.stringify(v));
    for (const c of "!#@$%&/|\\<>()[]{};,_=*^'") {
      assert.equal(isValidVersion("Debian", `0:0${c}-0`), false, `upstream with ${c}`);
      assert.equal(isValidVersion("Debian", `0:0-0${c}`), false, `revision with ${c}`);
    }
  });
});
