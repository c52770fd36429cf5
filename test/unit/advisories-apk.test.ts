// Alpine / Wolfi (apk) version ordering. The comparison table is taken from apk-tools' own test
// data (alpinelinux/apk-tools, test/version.data: "a op b" per line, checked there with
// `apk version -t`), a selection covering every rule; the rule cases follow src/version.c.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { compareVersions, isValidVersion } from "../../src/engines/advisories/ecosystems.js";

const VERSION_DATA = `
2.34 > 0.1.0_alpha
0.1.0_alpha = 0.1.0_alpha
0.1.0_alpha < 0.1.3_alpha
0.1.3_alpha > 0.1.0_alpha
0.1.0_alpha2 > 0.1.0_alpha
0.1.0_alpha < 2.2.39-r1
2.2.39-r1 > 1.0.4-r3
1.0.4-r3 < 1.0.4-r4
1.0.4-r4 < 1.6
1.6 > 1.0.2
1.0.2 > 0.7-r1
0.7-r1 < 1.0.0
1.0.0 < 1.0.1
1.0.1 < 1.1
1.1 > 1.1_alpha1
1.1_alpha1 < 1.2.1
1.2.1 > 1.2
1.2 < 1.3_alpha
1.3_alpha < 1.3_alpha2
1.3_alpha2 < 1.3_alpha3
1.3_alpha8 > 0.6.0
0.7.0 < 0.8_beta1
0.8_beta1 < 0.8_beta2
0.8_beta4 < 4.8-r1
4.8-r1 > 3.10.18-r1
3.10.18-r1 > 2.3.0b-r1
2.3.0b-r1 < 2.3.0b-r2
2.3.0b-r4 > 0.12.1
0.12.3 > 0.12
0.12 < 0.13_beta1
0.13_beta5 > 0.9.12
0.0.16 < 0.6
1.2.11 < 1.2.12.1
1.2.12.1 < 1.2.13
0.2.0-r1 < 3.1_p16
3.1_p16 < 3.1_p17
3.1_p17 > 1.06-r6
1.06-r6 < 006
006 > 1.0.0
1.2.2-r1 > 1.2.2
9.3.4-r2 > 9.3.4
2.59 < 20050718-r1
20050718-r2 > 3.9.8-r5
3.9.8-r5 > 2.01.01_alpha10
2.01.01_alpha10 > 0.94
1.0 > 0.99.3.20040818
0.99.3.20040818 > 0.7
1.39 > 1.00_beta2
1.00_beta2 > 0.9.2
1.02 < 1.03-r1
2.8.0.6-r1 > 0.5.2.7
0.5.2.7 < 4.2.52_p2-r1
4.2.52_p2-r1 < 4.2.52_p4-r2
4.2.52_p4-r2 > 1.02.07
1.02.07 < 1.02.10-r1
2.18.3-r10 > 1.05-r18
1.05-r18 < 1.05-r19
20060720 > 3.0.20060720
1.3.5-r10 > 1.3.5-r8
2.5.1-r8 < 2.5.1a-r1
1.4.4-r1 < 2.1.9.200602141850
20040401 > 2.0.0_rc3-r1
3.0.0-r2 < 021109-r3
021109-r3 < 20060512
0.9.16-r1 < 3.9_pre20060124
3.9_pre20060124 > 0.01
0.01 < 0.06
1.1.7 < 6b-r7
0.10.0-r1 > 0.10.0
0.10.0 < 0.10.1_rc1
2.0.2 > 1.1a
1.1a < 1.3a
1.0-r1 > 0.15.1b
0.15.1b-r2 > 0.15.1b
22.7-r1 < 22.7.3-r1
22.7.3-r1 > 22.7
22.7 > 2.1_pre20
2.1_pre20 < 2.1_pre26
2.10.1 > 02.08.01b
02.08.01b < 4.77
8.1.2.20040524-r1 < 8.1.2.20050715-r1
3.81 > 1.6d
1.6d > 1.2.07.8
1.2.07.8 < 1.2.12.04
1.2.12.04 < 1.2.12.05
0.59s-r11 < 0.65
4.20 > 0.20070118
0.20070118 < 0.20070207_rc1
0.20070207_rc1 < 1.0
2.3.30-r2 < 3.7_p1
4.5_p1-r1 > 4.5_p1
4.5_p1 > 0.9.8c-r1
0.9.8c-r1 < 0.9.8d
013 < 014-r1
1.7 < 1.7b
1.7b < 1.8.4-r3
1.8.5 < 1.8.5_p2
0.98 < 1.00
1.4.9-r2 < 2.9.11_pre20051101-r2
2.9.11_pre20051101-r3 > 2.9.11_pre20051101
2.9.11_pre20051101 < 2.9.11_pre20061021-r1
1.6.8_p12-r1 > 1.6.8_p9-r2
0.40-r1 < 2.25b-r5
1.4_p12-r2 < 1.4_p12-r5
0.9.28-r2 < 0.9.28.1
0.9.28.1 > 0.9.28
0.9.28.1 < 087-r1
087-r1 < 103
104-r11 > 104-r9
1.23-r1 > 1.23
5.52-r1 > 1.2.5_rc2
20040406-r1 > 2.12r-r4
2.12r-r4 < 2.12r-r5
7.0.17 < 7.0.174
1.1.1-r3 > 0.3.4_pre20061029
1.2.9.1-r1 > 1.2.9.1
1.3-r0 < 1.3.1-r0
1.3_pre1-r1 < 1.3.2
1.0_p10-r0 > 1.0_p9-r0
0.1.0_alpha_pre2 < 0.1.0_alpha
1.0.0_pre20191002222144-r0 < 1.0.0_pre20210530193627-r0
`;

const SIGN: Record<string, number> = { "<": -1, "=": 0, ">": 1 };

describe("apk version ordering", () => {
  test("apk-tools test/version.data", () => {
    const rows = VERSION_DATA.trim().split("\n");
    assert.ok(rows.length > 100);
    for (const row of rows) {
      const [a, op, b] = row.split(" ");
      assert.equal(compareVersions("Alpine", a, b), SIGN[op], row);
      assert.equal(compareVersions("Alpine", b, a), 0 - SIGN[op], `reversed: ${row}`);
    }
  });

  test("each rule on its own", () => {
    const ordered: string[][] = [
      // pre-release suffixes < none < post-release suffixes
      ["1.0_alpha", "1.0_beta", "1.0_pre", "1.0_rc", "1.0", "1.0_cvs", "1.0_svn", "1.0_git", "1.0_hg", "1.0_p"],
      // suffix numbers, then the revision
      ["1.0_rc1", "1.0_rc2", "1.0_rc10", "1.0_rc10-r1", "1.0"],
      ["1.2.3", "1.2.3-r0", "1.2.3-r1", "1.2.3-r10", "1.2.4-r0"],
      // a letter after the numbers is greater than none
      ["1.0", "1.0a", "1.0b", "1.0.1"],
      // numbers compare numerically; a component after a dot with a leading zero compares as text
      ["1.9", "1.10", "1.100"],
      ["1.01", "1.1"],
      ["1.001", "1.01", "1.010", "1.02"],
      // ...but the first component is always a number
      ["9", "010", "11"],
      // a ~hash compares as text, and sits between the suffixes and the revision
      ["1.0_git20230101~1a2b", "1.0_git20230101~1a2c", "1.0_git20230101~1a2c-r1"],
    ];
    for (const chain of ordered) {
      for (let i = 0; i + 1 < chain.length; i++) {
        assert.equal(compareVersions("Alpine", chain[i], chain[i + 1]), -1, `${chain[i]} < ${chain[i + 1]}`);
      }
    }
    assert.equal(compareVersions("Alpine", "1.0-r0", "1.0"), 1);
    assert.equal(compareVersions("Alpine", "010", "10"), 0);
    assert.equal(compareVersions("Wolfi", "3.0.13-r0", "3.0.13-r0"), 0);
  });

  test("validity follows apk_version_validate", () => {
    for (const v of ["1", "1.2.3-r0", "2.12r-r4", "0.1.0_alpha_pre2", "1.0_p10-r0", "20050718-r1", "1.0~c0ffee-r3"]) {
      assert.equal(isValidVersion("Alpine", v), true, v);
    }
    // "1.0bc" is apk-tools' own invalid example (two letters); the others break the grammar
    const invalid = ["", "1.0bc", "a1", "1.", "1.0-", "1.0-x1", "1.0_foo", "1.0_prefix", "1.0_rc.1", "1.0-r1.2", "1.0A",
      "1..0", "1.0-r1_p1", " 1.0", "1.0~", "1.0~xyz", "1.0a1", "1.0-r1~abc"];
    for (const v of invalid) {
      assert.equal(isValidVersion("Alpine", v), false, v);
    }
  });
});
