// Package URLs and the purl -> OSV ecosystem table, case by case.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { formatPurl, osvIdentity, packageOf, parsePurl, PurlError, uniquePackages } from "../../src/engines/inventory/index.js";

describe("purl parsing and formatting", () => {
  const cases: Array<[string, Partial<ReturnType<typeof parsePurl>>, string]> = [
    ["pkg:npm/%40bufbuild/protobuf@2.17.0", { type: "npm", namespace: "@bufbuild", name: "protobuf", version: "2.17.0" }, "pkg:npm/%40bufbuild/protobuf@2.17.0"],
    ["pkg:npm/@bufbuild/protobuf@2.17.0", { namespace: "@bufbuild" }, "pkg:npm/%40bufbuild/protobuf@2.17.0"],
    ["pkg:cargo/hyper@0.10.16", { type: "cargo", namespace: "", name: "hyper", version: "0.10.16" }, "pkg:cargo/hyper@0.10.16"],
    [
      "pkg:deb/debian/login@1:4.13%2Bdfsg1-1%2Bb1?distro=debian-12&arch=amd64&upstream=shadow",
      { type: "deb", namespace: "debian", name: "login", version: "1:4.13+dfsg1-1+b1", qualifiers: { distro: "debian-12", arch: "amd64", upstream: "shadow" } },
      "pkg:deb/debian/login@1:4.13%2Bdfsg1-1%2Bb1?arch=amd64&distro=debian-12&upstream=shadow",
    ],
    ["PKG:Maven/org.apache.logging.log4j/log4j-core@2.14.1", { type: "maven", namespace: "org.apache.logging.log4j", name: "log4j-core" }, "pkg:maven/org.apache.logging.log4j/log4j-core@2.14.1"],
    ["pkg:golang/github.com/gorilla/mux@v1.8.0#pkg/x", { namespace: "github.com/gorilla", name: "mux", version: "v1.8.0", subpath: "pkg/x" }, "pkg:golang/github.com/gorilla/mux@v1.8.0#pkg/x"],
    ["pkg:apk/alpine/busybox?arch=x86_64&empty=", { version: "", qualifiers: { arch: "x86_64" } }, "pkg:apk/alpine/busybox?arch=x86_64"],
  ];
  for (const [input, expected, canonical] of cases) {
    test(input, () => {
      const purl = parsePurl(input);
      for (const [k, v] of Object.entries(expected)) assert.deepEqual(purl[k as keyof typeof purl], v, k);
      assert.equal(formatPurl(purl), canonical);
      assert.deepEqual(parsePurl(canonical), purl, "the canonical form reads back the same");
    });
  }
  for (const bad of ["npm/left-pad@1.0.0", "pkg:", "pkg:npm", "pkg:npm/", "pkg:1npm/x", "pkg:npm/%ZZ@1", "pkg:npm/x?=v", `pkg:npm/${"a".repeat(3000)}`]) {
    test(`refused: ${bad.slice(0, 40)}`, () => assert.throws(() => parsePurl(bad), PurlError));
  }
});

describe("purl types to OSV ecosystems", () => {
  const cases: Array<[string, { ecosystem: string; name: string; version: string } | undefined]> = [
    ["pkg:npm/%40bufbuild/protobuf@2.17.0", { ecosystem: "npm", name: "@bufbuild/protobuf", version: "2.17.0" }],
    ["pkg:npm/semver@7.8.6", { ecosystem: "npm", name: "semver", version: "7.8.6" }],
    ["pkg:cargo/smallvec@0.6.9", { ecosystem: "crates.io", name: "smallvec", version: "0.6.9" }],
    ["pkg:pypi/Django@4.2", { ecosystem: "PyPI", name: "Django", version: "4.2" }],
    ["pkg:maven/org.apache.logging.log4j/log4j-core@2.14.1", { ecosystem: "Maven", name: "org.apache.logging.log4j:log4j-core", version: "2.14.1" }],
    ["pkg:golang/golang.org/x/net@v0.17.0", { ecosystem: "Go", name: "golang.org/x/net", version: "v0.17.0" }],
    ["pkg:deb/debian/libssl3@3.0.11-1~deb12u2?arch=amd64&distro=debian-12&upstream=openssl", { ecosystem: "Debian:12", name: "openssl", version: "3.0.11-1~deb12u2" }],
    ["pkg:deb/debian/libssl3@3.0.11-1~deb12u2%2Bb1?distro=debian-12.5&upstream=openssl%403.0.11-1~deb12u2", { ecosystem: "Debian:12", name: "openssl", version: "3.0.11-1~deb12u2" }],
    ["pkg:deb/debian/bash@5.2.15-2%2Bb2?distro=bookworm", { ecosystem: "Debian:12", name: "bash", version: "5.2.15-2+b2" }],
    ["pkg:deb/debian/bash@5.2.15-2", { ecosystem: "Debian", name: "bash", version: "5.2.15-2" }],
    ["pkg:deb/ubuntu/openssl@3.0.2-0ubuntu1.10?distro=ubuntu-22.04", { ecosystem: "Ubuntu:22.04:LTS", name: "openssl", version: "3.0.2-0ubuntu1.10" }],
    ["pkg:deb/ubuntu/openssl@3.0.10-1ubuntu2?distro=ubuntu-23.10", { ecosystem: "Ubuntu:23.10", name: "openssl", version: "3.0.10-1ubuntu2" }],
    ["pkg:apk/alpine/libcrypto3@3.1.4-r2?arch=x86_64&distro=alpine-3.19.1&upstream=openssl", { ecosystem: "Alpine:v3.19", name: "openssl", version: "3.1.4-r2" }],
    ["pkg:apk/wolfi/glibc@2.38-r5", { ecosystem: "Wolfi", name: "glibc", version: "2.38-r5" }],
    ["pkg:apk/chainguard/glibc@2.38-r5", { ecosystem: "Chainguard", name: "glibc", version: "2.38-r5" }],
    ["pkg:gem/rails@7.0.0", undefined],
    ["pkg:deb/raspbian/bash@5", undefined],
    ["pkg:maven/log4j-core@2.14.1", undefined],
  ];
  for (const [purl, expected] of cases) test(purl, () => assert.deepEqual(osvIdentity(parsePurl(purl)), expected));

  test("a package keeps its purl and carries its OSV identity; repeats of one package at one version collapse", () => {
    const a = packageOf("pkg:cargo/hyper@0.10.16");
    assert.deepEqual(a, { purl: "pkg:cargo/hyper@0.10.16", ecosystem: "crates.io", name: "hyper", version: "0.10.16" });
    const gem = packageOf("pkg:gem/rails@7.0.0");
    assert.deepEqual(gem, { purl: "pkg:gem/rails@7.0.0", ecosystem: "", name: "rails", version: "7.0.0" });
    const unique = uniquePackages([a, packageOf("pkg:cargo/hyper@0.10.16?checksum=x"), packageOf("pkg:cargo/hyper@0.10.17"), gem]);
    assert.deepEqual(unique.map((p) => p.purl), ["pkg:cargo/hyper@0.10.16", "pkg:cargo/hyper@0.10.17", "pkg:gem/rails@7.0.0"]);
  });
});
