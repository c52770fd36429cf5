// The package databases, lockfiles and SBOM formats, read from real documents (see
// test/fixtures/inventory/README.md) and this machine's own dpkg database.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { describe, test } from "node:test";
import {
  InventoryError,
  packagesOfFiles,
  parseApkInstalled,
  parseCargoLock,
  parseDpkgStatus,
  parseOsRelease,
  parsePackageLock,
  parseSbom,
} from "../../src/engines/inventory/index.js";
import { inRepo } from "../support/repo.js";

const fixture = (name: string) => readFileSync(inRepo(`test/fixtures/inventory/${name}`));
const alpine = parseOsRelease(fixture("alpine-3.19.os-release").toString())!;

describe("os-release", () => {
  test("Alpine's and this machine's", () => {
    assert.deepEqual(alpine, { id: "alpine", versionId: "3.19.1" });
    assert.deepEqual(parseOsRelease(readFileSync("/etc/os-release", "utf8"))?.id, "debian");
    assert.deepEqual(parseOsRelease('ID="wolfi"\nNAME=Wolfi'), { id: "wolfi", versionId: "" });
    assert.equal(parseOsRelease("NAME=nothing"), undefined);
  });
});

describe("apk installed database", () => {
  test("every stanza is a package, with its origin as upstream and the distro from os-release", () => {
    const packages = parseApkInstalled(fixture("alpine-3.19.installed").toString(), alpine);
    assert.deepEqual(
      packages.map((p) => p.purl),
      [
        "pkg:apk/alpine/musl@1.2.4_git20230717-r4?arch=x86_64&distro=alpine-3.19.1&upstream=musl",
        "pkg:apk/alpine/busybox@1.36.1-r15?arch=x86_64&distro=alpine-3.19.1&upstream=busybox",
        "pkg:apk/alpine/libcrypto3@3.1.4-r2?arch=x86_64&distro=alpine-3.19.1&upstream=openssl",
        "pkg:apk/alpine/libssl3@3.1.4-r2?arch=x86_64&distro=alpine-3.19.1&upstream=openssl",
        "pkg:apk/alpine/zlib@1.3.1-r0?arch=x86_64&distro=alpine-3.19.1&upstream=zlib",
        "pkg:apk/alpine/ca-certificates-bundle@20240226-r0?arch=x86_64&distro=alpine-3.19.1&upstream=ca-certificates",
      ],
    );
    assert.deepEqual(packages[2], { purl: packages[2].purl, ecosystem: "Alpine:v3.19", name: "openssl", version: "3.1.4-r2" });
  });
  test("a Wolfi image's namespace and ecosystem; no os-release: plain Alpine", () => {
    const wolfi = parseApkInstalled("P:glibc\nV:2.38-r5\nA:x86_64\no:glibc\n", { id: "wolfi", versionId: "" });
    assert.deepEqual(wolfi[0], { purl: "pkg:apk/wolfi/glibc@2.38-r5?arch=x86_64&distro=wolfi&upstream=glibc", ecosystem: "Wolfi", name: "glibc", version: "2.38-r5" });
    assert.equal(parseApkInstalled("P:zlib\nV:1.3-r2\n", undefined)[0].ecosystem, "Alpine");
  });
  test("not an installed database", () => {
    assert.throws(() => parseApkInstalled("Package: bash\nVersion: 5\n", alpine), /not an apk installed database line/);
    assert.throws(() => parseApkInstalled("P:zlib\nA:x86_64\n", alpine), /needs P: and V:/);
  });
});

describe("dpkg status", () => {
  test("this machine's /var/lib/dpkg/status: exactly what dpkg-query lists as installed", () => {
    const text = readFileSync("/var/lib/dpkg/status", "utf8");
    const packages = parseDpkgStatus(text, { id: "debian", versionId: "12" });
    const expected = execFileSync("dpkg-query", ["-W", "-f", "${db:Status-Status} ${Package} ${Version}\\n"], { encoding: "utf8" })
      .trim()
      .split("\n")
      .filter((l) => l.startsWith("installed "))
      .map((l) => l.split(" ").slice(1).join(" "))
      .sort();
    const got = packages.map((p) => {
      const match = /^pkg:deb\/debian\/([^@]+)@([^?]+)/.exec(p.purl)!;
      return `${decodeURIComponent(match[1])} ${decodeURIComponent(match[2])}`;
    });
    assert.deepEqual([...new Set(got)].sort(), [...new Set(expected)].sort());
    assert.ok(packages.length > 100);
    for (const p of packages) assert.equal(p.ecosystem, "Debian:12");
  });
  test("Source gives the advisory name and, with a version, the version matched", () => {
    const [pkg] = parseDpkgStatus(
      "Package: libssl3\nStatus: install ok installed\nArchitecture: amd64\nSource: openssl (3.0.11-1~deb12u2)\nVersion: 3.0.11-1~deb12u2+b1\nDescription: Secure Sockets Layer toolkit\n more text\n",
      { id: "debian", versionId: "12" },
    );
    assert.deepEqual(pkg, {
      purl: "pkg:deb/debian/libssl3@3.0.11-1~deb12u2%2Bb1?arch=amd64&distro=debian-12&upstream=openssl%403.0.11-1~deb12u2",
      ecosystem: "Debian:12",
      name: "openssl",
      version: "3.0.11-1~deb12u2",
    });
  });
  test("removed packages are not listed; status.d stanzas (no Status) are; bad stanzas are refused", () => {
    assert.deepEqual(parseDpkgStatus("Package: gone\nStatus: deinstall ok config-files\nVersion: 1\n", undefined), []);
    assert.equal(parseDpkgStatus("Package: base-files\nVersion: 12.4+deb12u5\nArchitecture: amd64\n", undefined)[0].ecosystem, "Debian");
    assert.throws(() => parseDpkgStatus("Package: x\n", undefined), InventoryError);
    assert.throws(() => parseDpkgStatus(" continuation first\n", undefined), /continuation line/);
    assert.throws(() => parseDpkgStatus("no colon here\n", undefined), /not a control field/);
  });
});

describe("lockfiles", () => {
  test("a real Cargo.lock: crates.io crates only, the workspace's own left out", () => {
    const packages = parseCargoLock(fixture("nickel.Cargo.lock").toString());
    const purls = packages.map((p) => p.purl);
    assert.ok(purls.includes("pkg:cargo/hyper@0.10.16") && purls.includes("pkg:cargo/smallvec@0.6.9"));
    assert.ok(!purls.some((p) => p.startsWith("pkg:cargo/nickel@")) || purls.includes("pkg:cargo/nickel@0.11.0"));
    assert.equal(packages.every((p) => p.ecosystem === "crates.io"), true);
    assert.deepEqual(parseCargoLock(fixture("normal.Cargo.lock").toString()).map((p) => p.purl), ["pkg:cargo/libc@0.2.54"]);
    assert.deepEqual(parseCargoLock('version = 3\n\n[[package]]\nname = "a"\nversion = "1.0.0"\nsource = "sparse+https://index.crates.io/"\n\n[[package]]\nname = "b"\nversion = "1.0.0"\nsource = "git+https://example.com/b#abc"\n').map((p) => p.purl), ["pkg:cargo/a@1.0.0"]);
    assert.throws(() => parseCargoLock("this is not toml at all"), /not a Cargo.lock/);
  });
  test("this repository's package-lock.json (lockfileVersion 3) and a version 1 lockfile", () => {
    const lock = JSON.parse(readFileSync(inRepo("package-lock.json"), "utf8")) as { packages: Record<string, { version?: string; link?: boolean }> };
    const packages = parsePackageLock(JSON.stringify(lock));
    const expected = Object.entries(lock.packages).filter(([k, v]) => k.includes("node_modules/") && !v.link && v.version).length;
    assert.equal(packages.length, expected);
    assert.ok(packages.some((p) => p.purl === "pkg:npm/%40bufbuild/protobuf@2.17.0" && p.name === "@bufbuild/protobuf" && p.ecosystem === "npm"));
    const v1 = parsePackageLock(fixture("v1.package-lock.json").toString());
    assert.ok(v1.some((p) => p.purl === "pkg:npm/jquery@3.4.0"));
    assert.throws(() => parsePackageLock("{"), /not JSON/);
    assert.throws(() => parsePackageLock('{"name":"x"}'), /not an npm lockfile/);
  });
});

describe("SBOMs", () => {
  const spdx = fixture("platform-api.spdx.json");
  const cdx = fixture("platform-api.cdx.json");
  const purlsOf = (bytes: Buffer) => parseSbom(bytes, "sbom")!.packages.map((p) => p.purl).sort();
  const expectedSpdx = (JSON.parse(spdx.toString()) as { packages: Array<{ externalRefs?: Array<{ referenceType: string; referenceLocator: string }> }> }).packages.flatMap((p) =>
    (p.externalRefs ?? []).filter((r) => r.referenceType === "purl").map((r) => r.referenceLocator),
  );

  test("SPDX 2.3 and CycloneDX 1.5 of the same tree (npm sbom) name the same packages", () => {
    const a = parseSbom(spdx, "spdx")!;
    const b = parseSbom(cdx, "cdx")!;
    assert.equal(a.format, "spdx");
    assert.equal(b.format, "cyclonedx");
    assert.equal(a.packages.length, expectedSpdx.length);
    assert.ok(a.packages.some((p) => p.name === "@bufbuild/protobuf" && p.ecosystem === "npm"));
    // The SPDX document also describes the root package; CycloneDX keeps it in metadata.
    const root = "pkg:npm/platform-api@0.1.0";
    assert.deepEqual(purlsOf(spdx).filter((p) => p !== root), purlsOf(cdx));
  });

  const statement = (predicateType: string, predicate: unknown) => ({
    _type: "https://in-toto.io/Statement/v0.1",
    predicateType,
    subject: [{ name: "registry/acme/app", digest: { sha256: "0".repeat(64) } }],
    predicate,
  });
  const envelope = (payload: unknown) => ({
    payloadType: "application/vnd.in-toto+json",
    payload: Buffer.from(JSON.stringify(payload)).toString("base64"),
    signatures: [{ keyid: "", sig: "MEUCIQ" }],
  });
  const json = (v: unknown) => Buffer.from(JSON.stringify(v));

  test("in an in-toto statement, a DSSE envelope, a Sigstore bundle, and cosign's older text predicate", () => {
    const expected = purlsOf(spdx);
    const spdxDoc = JSON.parse(spdx.toString());
    assert.deepEqual(purlsOf(json(statement("https://spdx.dev/Document", spdxDoc))), expected);
    assert.deepEqual(purlsOf(json(envelope(statement("https://spdx.dev/Document", spdxDoc)))), expected);
    assert.deepEqual(purlsOf(json({ mediaType: "application/vnd.dev.sigstore.bundle.v0.3+json", dsseEnvelope: envelope(statement("https://spdx.dev/Document", spdxDoc)) })), expected);
    assert.deepEqual(purlsOf(json(envelope(statement("https://spdx.dev/Document", { Data: spdx.toString() })))), expected);
    assert.deepEqual(purlsOf(json(envelope({ ...statement("https://cyclonedx.org/bom", JSON.parse(cdx.toString())), _type: "https://in-toto.io/Statement/v1" }))), purlsOf(cdx));
  });

  test("an attestation of something else is no SBOM; a bad SBOM is an error naming it", () => {
    assert.equal(parseSbom(json(envelope(statement("https://slsa.dev/provenance/v0.2", { builder: { id: "x" } }))), "att"), undefined);
    assert.throws(() => parseSbom(Buffer.from("SPDXVersion: SPDX-2.3\nDataLicense: CC0-1.0\n"), "layer sha256:ab of referrer"), /layer sha256:ab of referrer is not JSON/);
    assert.throws(() => parseSbom(json({ spdxVersion: "SPDX-3.0" }), "x"), /not SPDX 2.x/);
    assert.throws(() => parseSbom(json({ bomFormat: "CycloneDX", specVersion: "2.0" }), "x"), /not 1.2 to 1.6/);
    assert.throws(() => parseSbom(json({ payloadType: "application/vnd.in-toto+json", payload: "!!!" }), "x"), /not base64 of JSON/);
    const withBadPurl = parseSbom(json({ bomFormat: "CycloneDX", specVersion: "1.6", components: [{ purl: "not a purl" }, { purl: "pkg:cargo/a@1.0.0", components: [{ purl: "pkg:cargo/b@2.0.0" }] }] }), "x")!;
    assert.deepEqual(withBadPurl.packages.map((p) => p.purl), ["pkg:cargo/a@1.0.0", "pkg:cargo/b@2.0.0"]);
    assert.equal(withBadPurl.skipped, 1);
  });
});

describe("an image's files", () => {
  test("os-release, apk, dpkg, status.d and lockfiles together, in a stable order", () => {
    const files = new Map<string, Buffer>([
      ["app/Cargo.lock", fixture("normal.Cargo.lock")],
      ["etc/os-release", fixture("alpine-3.19.os-release")],
      ["lib/apk/db/installed", fixture("alpine-3.19.installed")],
      ["var/lib/dpkg/status.d/tzdata", Buffer.from("Package: tzdata\nVersion: 2024a-0+deb12u1\nArchitecture: all\n")],
      ["srv/package-lock.json", fixture("v1.package-lock.json")],
    ]);
    const { distro, packages } = packagesOfFiles(files);
    assert.deepEqual(distro, alpine);
    assert.equal(packages[0].purl.startsWith("pkg:apk/alpine/musl@"), true);
    assert.equal(packages.filter((p) => p.purl.startsWith("pkg:apk/")).length, 6);
    assert.ok(packages.some((p) => p.purl.startsWith("pkg:deb/debian/tzdata@")));
    assert.ok(packages.some((p) => p.purl === "pkg:cargo/libc@0.2.54"));
    assert.ok(packages.some((p) => p.purl === "pkg:npm/jquery@3.4.0"));
  });

  test("300,000 crates in a Cargo.lock and 300,000 purls in an SBOM are read (no argument list that large)", () => {
    const crates = Array.from({ length: 300_000 }, (_, i) => `[[package]]\nname = "crate-${i}"\nversion = "1.0.${i}"\nsource = "registry+https://github.com/rust-lang/crates.io-index"\n`).join("\n");
    const { packages } = packagesOfFiles(new Map([["app/Cargo.lock", Buffer.from(`version = 3\n\n${crates}`)]]));
    assert.equal(packages.length, 300_000);
    const sbom = { bomFormat: "CycloneDX", specVersion: "1.5", components: Array.from({ length: 300_000 }, (_, i) => ({ type: "library", name: `p${i}`, version: "1", purl: `pkg:npm/p${i}@1` })) };
    assert.equal(parseSbom(Buffer.from(JSON.stringify(sbom)), "a large SBOM")?.packages.length, 300_000);
  });
});
