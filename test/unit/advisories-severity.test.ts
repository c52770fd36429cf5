// OSV severity scores. Expected base scores are those of FIRST's reference calculators for each
// CVSS version (the CVSS 3.1 specification's examples, the CVSS 2 guide's, the examples of the
// OSV schema's severity table).
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { cvssBaseScore, cvssRating, scoreSeverities, scoreSeverity } from "../../src/engines/advisories/severity.js";

describe("CVSS base scores", () => {
  test("a vector of each version scores its base metrics", () => {
    const cases: [string, string, number][] = [
      ["CVSS_V2", "AV:L/AC:M/Au:N/C:N/I:P/A:C", 5.4], // the OSV schema's CVSS_V2 example
      ["CVSS_V2", "AV:N/AC:L/Au:N/C:N/I:N/A:C", 7.8], // CVSS v2 guide, CVE-2002-0392
      ["CVSS_V2", "AV:N/AC:L/Au:N/C:P/I:P/A:P", 7.5],
      ["CVSS_V3", "CVSS:3.1/AV:N/AC:H/PR:N/UI:N/S:C/C:H/I:N/A:N", 6.8], // the OSV schema's CVSS_V3 example
      ["CVSS_V3", "CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:H/I:H/A:H", 9.8],
      ["CVSS_V3", "CVSS:3.0/AV:N/AC:L/PR:N/UI:N/S:U/C:H/I:H/A:H", 9.8],
      ["CVSS_V3", "CVSS:3.1/AV:N/AC:L/PR:N/UI:R/S:C/C:L/I:L/A:N", 6.1], // the typical reflected XSS
      ["CVSS_V3", "CVSS:3.1/AV:P/AC:H/PR:H/UI:R/S:U/C:N/I:N/A:N", 0],
      ["CVSS_V4", "CVSS:4.0/AV:N/AC:L/AT:N/PR:H/UI:N/VC:L/VI:L/VA:N/SC:N/SI:N/SA:N", 5.1], // the OSV schema's CVSS_V4 example
      ["CVSS_V4", "CVSS:4.0/AV:N/AC:L/AT:N/PR:N/UI:N/VC:H/VI:H/VA:H/SC:N/SI:N/SA:N", 9.3],
    ];
    for (const [type, vector, score] of cases) {
      assert.deepEqual(scoreSeverity({ type, score: vector }), { type, vector, baseScore: score }, vector);
    }
  });

  test("temporal, threat and environmental metrics do not change the base score", () => {
    assert.equal(cvssBaseScore("CVSS_V3", "CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:H/I:H/A:H/E:U/RL:O/RC:U"), 9.8);
    assert.equal(cvssBaseScore("CVSS_V3", "CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:H/I:H/A:H/MAV:P"), 9.8);
    assert.equal(cvssBaseScore("CVSS_V2", "AV:N/AC:L/Au:N/C:P/I:P/A:P/E:U/RL:OF/RC:UC"), 7.5);
    // CVSS 4: the CVSS-B score, not the CVSS-BT one the full vector would give (8.1)
    assert.equal(cvssBaseScore("CVSS_V4", "CVSS:4.0/AV:N/AC:L/AT:N/PR:N/UI:N/VC:H/VI:H/VA:H/SC:N/SI:N/SA:N/E:U"), 9.3);
  });

  test("an unparseable vector has no score, and nothing throws", () => {
    const unscored: [string, string][] = [
      ["CVSS_V3", ""],
      ["CVSS_V3", "garbage"],
      ["CVSS_V3", "CVSS:3.1/AV:N"], // base metrics missing
      ["CVSS_V3", "AV:N/AC:L/PR:N/UI:N/S:U/C:H/I:H/A:H"], // no CVSS:3.x prefix
      ["CVSS_V3", "CVSS:3.2/AV:N/AC:L/PR:N/UI:N/S:U/C:H/I:H/A:H"], // no such version
      ["CVSS_V3", "CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:H/I:H/A:H/FOO:BAR"], // unknown metric
      ["CVSS_V3", "CVSS:3.1/AV:Q/AC:L/PR:N/UI:N/S:U/C:H/I:H/A:H"], // unknown value
      ["CVSS_V3", "CVSS:3.1/AV:X/AC:L/PR:N/UI:N/S:U/C:H/I:H/A:H"], // a base metric not defined
      ["CVSS_V3", "CVSS:3.1/AV:N/AV:L/AC:L/PR:N/UI:N/S:U/C:H/I:H/A:H"], // repeated metric
      ["CVSS_V3", "cvss:3.1/av:n/ac:l/pr:n/ui:n/s:u/c:h/i:h/a:h"],
      ["CVSS_V3", "CVSS:4.0/AV:N/AC:L/AT:N/PR:N/UI:N/VC:H/VI:H/VA:H/SC:N/SI:N/SA:N"], // typed V3, vector V4
      ["CVSS_V4", "CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:H/I:H/A:H"],
      ["CVSS_V4", "CVSS:4.0/AV:N/AC:L/AT:N/PR:N/UI:N/VC:H/VI:H/VA:H/SC:N/SI:N"], // SA missing
      ["CVSS_V2", "CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:H/I:H/A:H"],
      ["CVSS_V2", "(AV:N/AC:L/Au:N/C:P/I:P/A:P)"],
      ["CVSS_V5", "CVSS:5.0/AV:N"],
    ];
    for (const [type, vector] of unscored) {
      assert.deepEqual(scoreSeverity({ type, score: vector }), { type, vector }, `${type} ${vector}`);
    }
  });

  test("types without a numeric score keep their score string", () => {
    assert.deepEqual(scoreSeverity({ type: "Ubuntu", score: "medium" }), { type: "Ubuntu", vector: "medium" });
  });

  test("scoreSeverities keeps the order and treats an absent array as none", () => {
    assert.deepEqual(scoreSeverities(undefined), []);
    assert.deepEqual(
      scoreSeverities([
        { type: "CVSS_V3", score: "CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:H/I:H/A:H" },
        { type: "Ubuntu", score: "high" },
      ]).map((s) => s.baseScore),
      [9.8, undefined],
    );
  });

  test("qualitative ratings (CVSS v3.1 specification, table 14)", () => {
    const cases: [number, string][] = [[0, "NONE"], [0.1, "LOW"], [3.9, "LOW"], [4, "MEDIUM"], [6.9, "MEDIUM"], [7, "HIGH"], [8.9, "HIGH"], [9, "CRITICAL"], [10, "CRITICAL"]];
    for (const [score, rating] of cases) assert.equal(cvssRating(score), rating, String(score));
  });
});
