// The severity views both advisory APIs serve: scored once per (type, vector).
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { cachedScore, severityViews } from "../../src/domains/vulnerabilities/osv-view.js";

const V3 = "CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:H/I:H/A:H";
const V4 = "CVSS:4.0/AV:N/AC:L/AT:N/PR:N/UI:N/VC:H/VI:H/VA:H/SC:N/SI:N/SA:N";

describe("severity views", () => {
  test("a (type, vector) pair is scored once: later calls return the same score", () => {
    const first = cachedScore({ type: "CVSS_V4", score: V4 });
    assert.equal(first.baseScore, 9.3);
    assert.equal(cachedScore({ type: "CVSS_V4", score: V4 }), first);
  });

  test("the type is part of what is scored: a vector under another type is scored anew", () => {
    assert.equal(cachedScore({ type: "CVSS_V3", score: V3 }).baseScore, 9.8);
    assert.equal(cachedScore({ type: "CVSS_V4", score: V3 }).baseScore, undefined);
    assert.equal(cachedScore({ type: "Ubuntu", score: V3 }).baseScore, undefined);
  });

  test("views keep each severity's order, type, vector and score, whether scored before or not", () => {
    const severities = [
      { type: "CVSS_V3", score: V3 },
      { type: "CVSS_V4", score: V4 },
      { type: "Ubuntu", score: "high" },
    ];
    const expected = [
      { type: 2, score: V3, baseScore: 9.8, osvType: "CVSS_V3" },
      { type: 3, score: V4, baseScore: 9.3, osvType: "CVSS_V4" },
      { type: 0, score: "high", baseScore: undefined, osvType: "Ubuntu" },
    ];
    assert.deepEqual(severityViews(severities), expected);
    assert.deepEqual(severityViews(severities), expected);
  });
});
