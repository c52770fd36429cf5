// SemVer (npm, crates.io), Go and PyPI orderings, and the index of ecosystems.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import fc from "fast-check";
import {
  ECOSYSTEM_NAMES,
  compareVersions,
  isKnownEcosystem,
  isValidVersion,
  parseVersion,
  resolveEcosystem,
  samePackage,
} from "../../src/engines/advisories/ecosystems.js";
import { InvalidVersionError, UnknownEcosystemError } from "../../src/engines/advisories/errors.js";

function assertChain(ecosystem: string, chain: string[]): void {
  for (let i = 0; i < chain.length; i++) {
    for (let j = i + 1; j < chain.length; j++) {
      assert.equal(compareVersions(ecosystem, chain[i], chain[j]), -1, `${ecosystem}: ${chain[i]} < ${chain[j]}`);
      assert.equal(compareVersions(ecosystem, chain[j], chain[i]), 1, `${ecosystem}: ${chain[j]} > ${chain[i]}`);
    }
  }
}

describe("SemVer 2 (npm, crates.io)", () => {
  // https://semver.org/#spec-item-11, the examples of precedence
  const CHAINS = [
    ["1.0.0", "2.0.0", "2.1.0", "2.1.1"],
    ["1.0.0-alpha", "1.0.0-alpha.1", "1.0.0-alpha.beta", "1.0.0-beta", "1.0.0-beta.2", "1.0.0-beta.11", "1.0.0-rc.1", "1.0.0"],
  ];

  test("precedence, spec item 11", () => {
    for (const ecosystem of ["npm", "crates.io"]) for (const chain of CHAINS) assertChain(ecosystem, chain);
  });

  test("build metadata does not count (spec item 10)", () => {
    assert.equal(compareVersions("npm", "1.0.0+20130313144700", "1.0.0"), 0);
    assert.equal(compareVersions("crates.io", "1.0.0-beta+exp.sha.5114f85", "1.0.0-beta"), 0);
  });

  test("validity: the SemVer 2 grammar, no v prefix, no blanks", () => {
    for (const v of ["0.0.0", "1.2.3", "1.0.0-0", "1.0.0-x.7.z.92", "1.0.0-alpha+001", "1.0.0+21AF26D3----117B344092BD"]) {
      assert.equal(isValidVersion("npm", v), true, v);
      assert.equal(isValidVersion("crates.io", v), true, v);
    }
    for (const v of ["", "0", "1", "1.2", "1.2.3.4", "01.2.3", "1.02.3", "1.2.3-01", "1.2.3-", "v1.2.3", "=1.2.3", " 1.2.3", "1.2.3 ", "1.2.3-a b"]) {
      assert.equal(isValidVersion("npm", v), false, v);
      assert.equal(isValidVersion("crates.io", v), false, v);
    }
  });
});

describe("Go", () => {
  test("v-prefixed SemVer, pseudo-versions, +incompatible", () => {
    assertChain("Go", [
      "v0.0.0-20191109021931-daa7c04131f5",
      "v0.0.0-20200101000000-abcdef123456",
      "v0.1.0",
      "v1.2.3-pre",
      "v1.2.3",
      "v1.2.4-0.20200101000000-abcdef123456", // a pseudo-version after v1.2.3
      "v1.2.4",
      "v2.0.0+incompatible",
    ]);
  });

  test("OSV's bounds omit the v; both spellings are one version", () => {
    assert.equal(compareVersions("Go", "v1.2.3", "1.2.3"), 0);
    assert.equal(compareVersions("Go", "v0.0.0-20191109021931-daa7c04131f5", "0.0.0-20191109021931-daa7c04131f5"), 0);
    assert.equal(compareVersions("Go", "v2.0.0+incompatible", "v2.0.0"), 0);
  });

  test("validity: full SemVer with an optional v", () => {
    for (const v of ["v1.2.3", "1.2.3", "v0.0.0-20191109021931-daa7c04131f5"]) assert.equal(isValidVersion("Go", v), true, v);
    for (const v of ["v1", "v1.2", "vv1.2.3", "go1.21", "V1.2.3"]) assert.equal(isValidVersion("Go", v), false, v);
  });
});

describe("PyPI (PEP 440)", () => {
  test("the ordering example of PEP 440 (Summary of permitted suffixes and relative ordering)", () => {
    assertChain("PyPI", [
      "1.dev0", "1.0.dev456", "1.0a1", "1.0a2.dev456", "1.0a12.dev456", "1.0a12", "1.0b1.dev456", "1.0b2",
      "1.0b2.post345.dev456", "1.0b2.post345", "1.0rc1.dev456", "1.0rc1", "1.0", "1.0+abc.5", "1.0+abc.7", "1.0+5",
      "1.0.post456.dev34", "1.0.post456", "1.0.15", "1.1.dev1",
    ]);
  });

  test("epochs, zero padding and normalized spellings (PEP 440 Normalization)", () => {
    assertChain("PyPI", ["2013.10", "2014.04", "1!1.0", "1!1.1"]);
    for (const [a, b] of [["1.0", "1.0.0"], ["1.0RC1", "1.0rc1"], ["1.0c1", "1.0rc1"], ["1.0-post1", "1.0.post1"],
      ["1.0alpha1", "1.0a1"], ["1.0-1", "1.0.post1"], ["v1.0", "1.0"], ["1.0.dev", "1.0.dev0"], ["0!1.0", "1.0"]]) {
      assert.equal(compareVersions("PyPI", a, b), 0, `${a} == ${b}`);
    }
  });

  test("validity: the PEP 440 grammar", () => {
    for (const v of ["1", "1.0", "1.0.post1", "1!2.0", "1.0+ubuntu.1", "2023.10.1"]) assert.equal(isValidVersion("PyPI", v), true, v);
    for (const v of ["", "foo", "1.0-foo", "1.0 ", "1..0", "1.0+", "=1.0"]) assert.equal(isValidVersion("PyPI", v), false, v);
  });
});

describe("the index of ecosystems", () => {
  test("the OSV names, some with a release or repository suffix", () => {
    assert.deepEqual(
      [...ECOSYSTEM_NAMES].sort(),
      ["Alpine", "Chainguard", "Debian", "Go", "Maven", "PyPI", "Ubuntu", "Wolfi", "crates.io", "npm"],
    );
    for (const name of ["Alpine:v3.18", "Debian:12", "Debian:sid", "Ubuntu:22.04:LTS", "Maven:https://maven.google.com"]) {
      assert.equal(isKnownEcosystem(name), true, name);
    }
    assert.deepEqual(resolveEcosystem("Alpine:v3.18").suffix, "v3.18");
    assert.equal(resolveEcosystem("Ubuntu:22.04:LTS").suffix, "22.04:LTS");
    assert.equal(resolveEcosystem("Maven:https://maven.google.com").ecosystem.name, "Maven");
  });

  test("an unknown ecosystem is an UnknownEcosystemError naming it", () => {
    for (const name of ["", "Packagist", "NPM", "pypi", "alpine", "npm:extra", "Wolfi:1", "Alpine:", "crates.io:x"]) {
      assert.equal(isKnownEcosystem(name), false, name);
      assert.throws(() => compareVersions(name, "1.0.0", "1.0.0"), (e: unknown) => e instanceof UnknownEcosystemError && e.ecosystem === name);
    }
  });

  test("a malformed version is an InvalidVersionError naming the ecosystem and the version", () => {
    assert.throws(
      () => compareVersions("npm", "1.0.0", "not-a-version"),
      (e: unknown) => e instanceof InvalidVersionError && e.ecosystem === "npm" && e.version === "not-a-version",
    );
    assert.throws(() => parseVersion("Debian:12", "abc"), InvalidVersionError);
    assert.throws(() => parseVersion("Alpine:v3.18", "1.0bc"), InvalidVersionError);
  });

  test("samePackage: ecosystem, release suffix, and names by the ecosystem's rule", () => {
    assert.equal(samePackage({ ecosystem: "PyPI", name: "Django_REST.framework" }, { ecosystem: "PyPI", name: "django-rest-framework" }), true);
    assert.equal(samePackage({ ecosystem: "npm", name: "Lodash" }, { ecosystem: "npm", name: "lodash" }), false);
    assert.equal(samePackage({ ecosystem: "npm", name: "lodash" }, { ecosystem: "PyPI", name: "lodash" }), false);
    assert.equal(samePackage({ ecosystem: "Alpine:v3.18", name: "openssl" }, { ecosystem: "Alpine:v3.18", name: "openssl" }), true);
    assert.equal(samePackage({ ecosystem: "Alpine:v3.18", name: "openssl" }, { ecosystem: "Alpine:v3.19", name: "openssl" }), false);
    assert.equal(samePackage({ ecosystem: "Alpine", name: "openssl" }, { ecosystem: "Alpine:v3.19", name: "openssl" }), true);
    assert.equal(samePackage({ ecosystem: "npm", name: "x" }, { ecosystem: "Packagist", name: "x" }), false);
  });
});

describe("every ordering is a total preorder", () => {
  // Versions assembled from each grammar's pieces; a sorted list must be in order pair by pair
  // (transitivity: Maven's MNG-5568 was a failure of it) and comparing both ways must agree.
  const PIECES: Record<string, string[]> = {
    Maven: ["0", "1", "2", "10", ".", "-", "a", "b", "rc", "sp", "ga", "final", "snapshot", "x", "alpha", "m", "cr"],
    Alpine: ["0", "1", "2", "10", "01", ".", ".0", "a", "b", "_alpha", "_rc", "_p", "_git", "-r", "~ab", "~0f"],
    Debian: ["0", "1", "2", "10", ".", "-", "a", "+", "~", ":"],
    PyPI: ["0", "1", "2", ".", "a", "b", "rc", ".post", ".dev", "+local", "!"],
  };
  const semverVersion = fc
    .tuple(
      fc.array(fc.constantFrom("0", "1", "2", "10"), { minLength: 3, maxLength: 3 }),
      fc.array(fc.constantFrom("0", "1", "11", "alpha", "beta", "x-y"), { maxLength: 3 }),
      fc.constantFrom("", "+build", "+b.1"),
    )
    .map(([core, pre, build]) => core.join(".") + (pre.length > 0 ? `-${pre.join(".")}` : "") + build);
  const arbitrary = (ecosystem: string): fc.Arbitrary<string> =>
    ecosystem === "npm"
      ? semverVersion
      : fc
          .array(fc.constantFrom(...PIECES[ecosystem]), { minLength: 1, maxLength: 7 })
          .map((xs) => xs.join(""))
          .filter((v) => isValidVersion(ecosystem, v));
  for (const ecosystem of [...Object.keys(PIECES), "npm"]) {
    test(ecosystem, () => {
      const version = arbitrary(ecosystem);
      fc.assert(
        fc.property(fc.array(version, { minLength: 2, maxLength: 30 }), (versions) => {
          const sorted = [...versions].sort((a, b) => compareVersions(ecosystem, a, b));
          for (let i = 0; i < sorted.length; i++) {
            for (let j = i + 1; j < sorted.length; j++) {
              const ij = compareVersions(ecosystem, sorted[i], sorted[j]);
              assert.ok(ij <= 0, `${sorted[i]} <= ${sorted[j]}`);
              assert.equal(compareVersions(ecosystem, sorted[j], sorted[i]), 0 - ij);
            }
          }
        }),
        { numRuns: 300 },
      );
    });
  }
});
