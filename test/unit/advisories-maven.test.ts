// Maven version ordering. Cases from Maven's own ComparableVersionTest
// (apache/maven, compat/maven-artifact/src/test/java/org/apache/maven/artifact/versioning/
// ComparableVersionTest.java), one block per test method there.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { compareVersions, isValidVersion } from "../../src/engines/advisories/ecosystems.js";

const cmp = (a: string, b: string): number => compareVersions("Maven", a, b);

function assertOrder(versions: string[]): void {
  for (let i = 0; i < versions.length; i++) {
    for (let j = i + 1; j < versions.length; j++) {
      assert.equal(cmp(versions[i], versions[j]), -1, `expected ${versions[i]} < ${versions[j]}`);
      assert.equal(cmp(versions[j], versions[i]), 1, `expected ${versions[j]} > ${versions[i]}`);
    }
  }
}

function assertEqual(a: string, b: string): void {
  assert.equal(cmp(a, b), 0, `expected ${a} == ${b}`);
  assert.equal(cmp(b, a), 0, `expected ${b} == ${a}`);
}

describe("Maven ComparableVersion ordering", () => {
  test("testVersionsQualifier", () => {
    assertOrder([
      "1-alpha2snapshot", "1-alpha2", "1-alpha-123", "1-beta-2", "1-beta123", "1-m2", "1-m11", "1-rc", "1-cr2",
      "1-rc123", "1-SNAPSHOT", "1", "1-sp", "1-sp2", "1-sp123", "1-abc", "1-def", "1-pom-1", "1-1-snapshot",
      "1-1", "1-2", "1-123",
    ]);
  });

  test("testVersionsNumber", () => {
    assertOrder([
      "2.0", "2.0.a", "2-1", "2.0.2", "2.0.123", "2.1.0", "2.1-a", "2.1b", "2.1-c", "2.1-1", "2.1.0.1", "2.2",
      "2.123", "11.a2", "11.a11", "11.b2", "11.b11", "11.m2", "11.m11", "11", "11.a", "11b", "11c", "11m",
    ]);
  });

  test("testVersionsEqual", () => {
    const pairs: [string, string][] = [
      ["1", "1"], ["1", "1.0"], ["1", "1.0.0"], ["1.0", "1.0.0"], ["1", "1-0"], ["1", "1.0-0"], ["1.0", "1.0-0"],
      // no separator between number and character
      ["1a", "1-a"], ["1a", "1.0-a"], ["1a", "1.0.0-a"], ["1.0a", "1-a"], ["1.0.0a", "1-a"],
      ["1x", "1-x"], ["1x", "1.0-x"], ["1x", "1.0.0-x"], ["1.0x", "1-x"], ["1.0.0x", "1-x"], ["1cr", "1rc"],
      // special "aliases" a, b and m for alpha, beta and milestone
      ["1a1", "1-alpha-1"], ["1b2", "1-beta-2"], ["1m3", "1-milestone-3"],
      // case insensitive
      ["1X", "1x"], ["1A", "1a"], ["1B", "1b"], ["1M", "1m"], ["1Cr", "1Rc"], ["1cR", "1rC"],
      ["1m3", "1Milestone3"], ["1m3", "1MileStone3"], ["1m3", "1MILESTONE3"],
    ];
    for (const [a, b] of pairs) assertEqual(a, b);
  });

  test("testVersionsHaveSameOrderButAreNotEqual: ga, final and release sort as no qualifier", () => {
    for (const v of ["1ga", "1release", "1final", "1Ga", "1GA", "1RELEASE", "1RELeaSE", "1Final", "1FinaL", "1FINAL"]) {
      assertEqual(v, "1");
    }
  });

  test("testVersionComparing", () => {
    const pairs: [string, string][] = [
      ["1", "2"], ["1.5", "2"], ["1", "2.5"], ["1.0", "1.1"], ["1.1", "1.2"], ["1.0.0", "1.1"], ["1.0.1", "1.1"],
      ["1.1", "1.2.0"],
      ["1.0-alpha-1", "1.0"], ["1.0-alpha-1", "1.0-alpha-2"], ["1.0-alpha-1", "1.0-beta-1"],
      ["1.0-beta-1", "1.0-SNAPSHOT"], ["1.0-SNAPSHOT", "1.0"], ["1.0-alpha-1-SNAPSHOT", "1.0-alpha-1"],
      ["1.0", "1.0-1"], ["1.0-1", "1.0-2"], ["1.0.0", "1.0-1"],
      ["2.0-1", "2.0.1"], ["2.0.1-klm", "2.0.1-lmn"], ["2.0.1", "2.0.1-xyz"],
      ["2.0.1", "2.0.1-123"], ["2.0.1-xyz", "2.0.1-123"],
    ];
    for (const pair of pairs) assertOrder(pair);
  });

  test("testLeadingZeroes", () => {
    assertOrder(["0.7", "2"]);
    assertOrder(["0.2", "1.0.7"]);
  });

  test("testCompareDigitToLetter and testLexicographicOrder (ASCII)", () => {
    assertOrder(["J", "7"]);
    assertOrder(["c", "7"]);
    assertOrder(["aardvark", "zebra"]);
  });

  test("testLexicographicASCIISortOrder, testCompareLowerCaseToUpperCaseASCII, testLocaleIndependent", () => {
    assertEqual("1.0.0-alpha1", "1.0.0-ALPHA1");
    assertEqual("1.a", "1.A");
    assertEqual("1-abcdefghijklmnopqrstuvwxyz", "1-ABCDEFGHIJKLMNOPQRSTUVWXYZ");
  });

  test("testMng5568: transitive around 6.1H.5-beta", () => {
    assertOrder(["6.1.0rc3", "6.1.0"]);
    assertOrder(["6.1.0rc3", "6.1H.5-beta"]);
    assertOrder(["6.1.0", "6.1H.5-beta"]);
  });

  test("testMng6572: numbers of any length", () => {
    const a = "20190126.230843";
    const b = "1234567890.12345";
    const c = "123456789012345.1H.5-beta";
    const d = "12345678901234567890.1H.5-beta";
    for (const pair of [[a, b], [b, c], [a, c], [c, d], [b, d], [a, d]]) assertOrder(pair);
  });

  test("testVersionEqualWithLeadingZeroes and testVersionZeroEqualWithLeadingZeroes", () => {
    for (let n = 0; n <= 18; n++) {
      assertEqual("0".repeat(n) + "1", "1");
      assertEqual("0".repeat(n + 1), "0");
    }
  });

  test("testMng6964: qualifiers after -0.", () => {
    assertOrder(["1-0.alpha", "1"]);
    assertOrder(["1-0.beta", "1"]);
    assertOrder(["1-0.alpha", "1-0.beta"]);
  });

  test("testMng7644: 1.0.0.X1 < 1.0.0-X2 and 2-X == 2.0.X == 2.0.0.X", () => {
    for (const x of ["abc", "alpha", "a", "beta", "b", "def", "milestone", "m", "RC"]) {
      assertOrder([`1.0.0.${x}1`, `1.0.0-${x}2`]);
      assertEqual(`2-${x}`, `2.0.${x}`);
      assertEqual(`2-${x}`, `2.0.0.${x}`);
      assertEqual(`2.0.${x}`, `2.0.0.${x}`);
    }
  });

  test("testMng7714: final < sp", () => {
    for (const sp of ["1.0-sp1-redhat", "1.0-sp-1-redhat", "1.0-sp.1-redhat"]) assertOrder(["1.0.final-redhat", sp]);
  });

  test("CombinationItem's documented cases: 1-rc1 < 1 < 1-ga1", () => {
    assertOrder(["1-rc1", "1", "1-ga1"]);
  });

  test("real-world spellings", () => {
    assertOrder(["5.3.1.RELEASE", "5.3.2.RELEASE", "5.3.10"]);
    assertOrder(["2.0.0-RC1", "2.0.0-RC2", "2.0.0", "2.0.0-1"]);
    assertOrder(["30.1-android", "31.0-jre", "31.1-jre"]);
    assertEqual("1.0.Final", "1.0");
  });

  test("validity: non-empty printable ASCII without blanks, at most 256 characters", () => {
    for (const v of ["1", "1.0-SNAPSHOT", "2.0.0.RC1", "a".repeat(256)]) assert.equal(isValidVersion("Maven", v), true, v);
    for (const v of ["", " 1.0", "1.0 ", "1 .0", "é", "1.0\n", "a".repeat(257)]) assert.equal(isValidVersion("Maven", v), false, v);
  });
});
