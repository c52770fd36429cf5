import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, test } from "node:test";
import { gzipSync } from "node:zlib";
import { parseCoreMetadata } from "../../src/engines/package-feeds/core-metadata.js";
import { readDistribution } from "../../src/engines/package-feeds/distributions.js";
import { LibraryDocumentError } from "../../src/engines/package-feeds/library-package.js";
import { parseMavenMetadata, parsePom, readMavenArtifact } from "../../src/engines/package-feeds/maven.js";
import { pypiProjectOf } from "../../src/engines/package-feeds/pypi.js";
import { findTarEntry } from "../../src/engines/package-feeds/tar.js";
import { inRepo } from "../support/repo.js";

/** Python core metadata, sdists, wheels and Maven metadata and POMs: the shipped real files, and broken ones. */

const FIXTURES = inRepo("test/fixtures/libraries");
const PYPI = join(FIXTURES, "pypi");
const MAVEN = join(FIXTURES, "maven");
const dir = mkdtempSync(join(tmpdir(), "platform-api-libraries-"));
after(() => rmSync(dir, { recursive: true, force: true }));
const refusal = (pattern: RegExp) => (e: unknown) => e instanceof LibraryDocumentError && pattern.test(e.message);

test("core metadata: a wheel's METADATA (2.4, License-Expression), an old PKG-INFO (1.2), headers only", () => {
  const requests = parseCoreMetadata(readFileSync(join(PYPI, "requests-2.34.2-py3-none-any.whl.metadata"), "utf8"), "requests");
  assert.deepEqual(requests, { name: "requests", version: "2.34.2", summary: "Python HTTP for Humans." });
  const toml = parseCoreMetadata(readFileSync(join(PYPI, "toml-0.10.2.egg-info", "PKG-INFO"), "utf8"), "toml");
  assert.deepEqual(toml, { name: "toml", version: "0.10.2", summary: "Python Library for Tom's Obvious, Minimal Language" });
  const folded = parseCoreMetadata("Metadata-Version: 2.1\r\nName: x\r\nVersion: 1.0\r\nSummary: one\r\n  two\r\nSummary: ignored\r\n\r\nName: body", "f");
  assert.deepEqual(folded, { name: "x", version: "1.0", summary: "one two" }, "CRLF, a folded header, a repeated one, the body not read");
});

test("core metadata that is wrong is refused naming the file and the header", () => {
  assert.throws(() => parseCoreMetadata("Name: x\nVersion: 1.0\n", "a"), refusal(/^a: not Python core metadata \(no Metadata-Version header\)$/));
  assert.throws(() => parseCoreMetadata("Metadata-Version: 2.1\nVersion: 1.0\n", "b"), refusal(/^b: not Python core metadata \(no Name header\)$/));
  assert.throws(() => parseCoreMetadata("Metadata-Version: 2.1\nName: bad name!\nVersion: 1.0\n", "c"), refusal(/^c: Name: "bad name!" is not a Python project name$/));
  assert.throws(() => parseCoreMetadata("Metadata-Version: 2.1\nName: x\nVersion: one\n", "d"), refusal(/^d: Version: "one" is not a PEP 440 version$/));
  assert.throws(() => parseCoreMetadata(" indented\nName: x\n", "e"), refusal(/^e: line 1: a continuation line before any header$/));
  assert.throws(() => parseCoreMetadata("{\"info\": {}}", "f"), refusal(/^f: line 1: not a "Name: value" header$/));
});

test("a wheel, an sdist and a PEP 658 .metadata file are read with their sizes", async () => {
  const wheel = await readDistribution(join(PYPI, "six-1.17.0-py2.py3-none-any.whl"), "wheel");
  assert.deepEqual(wheel, { metadata: { name: "six", version: "1.17.0", summary: "Python 2 and 3 compatibility utilities" }, sizeBytes: 11050 });
  const beside = await readDistribution(join(PYPI, "six-1.17.0-py2.py3-none-any.whl.metadata"), "metadata");
  assert.equal(beside.sizeBytes, 11050, "the size of the wheel it lies beside");
  const alone = await readDistribution(join(PYPI, "numpy-2.4.6-cp311-cp311-manylinux_2_27_x86_64.manylinux_2_28_x86_64.whl.metadata"), "metadata");
  assert.equal(alone.sizeBytes, 0);
  const sdist = await readDistribution(join(PYPI, "wheel-0.38.4.tar.gz"), "sdist");
  assert.deepEqual(sdist.metadata, { name: "wheel", version: "0.38.4", summary: "A built-package format for Python" });
  assert.ok(sdist.sizeBytes > 500);
});

test("broken distributions are refused naming the file and why", async () => {
  const write = (name: string, data: string | Buffer) => {
    writeFileSync(join(dir, name), data);
    return join(dir, name);
  };
  await assert.rejects(readDistribution(write("a.whl", "not a zip"), "wheel"), refusal(/a\.whl: not a wheel \(zip\): /));
  mkdirSync(join(dir, "tree", "x-1.0"), { recursive: true });
  writeFileSync(join(dir, "tree", "x-1.0", "setup.py"), "");
  execFileSync("tar", ["czf", join(dir, "no-pkg-info.tar.gz"), "-C", join(dir, "tree"), "x-1.0"]);
  await assert.rejects(readDistribution(join(dir, "no-pkg-info.tar.gz"), "sdist"), refusal(/no-pkg-info\.tar\.gz: an sdist without <name>-<version>\/PKG-INFO$/));
  await assert.rejects(readDistribution(write("b.tar.gz", gzipSync(Buffer.alloc(700, 7))), "sdist"), refusal(/b\.tar\.gz: not an sdist \(\.tar\.gz\): not a tar archive/));
  await assert.rejects(readDistribution(write("c.tar.gz", "plain"), "sdist"), refusal(/c\.tar\.gz: not an sdist \(\.tar\.gz\): /));
  await assert.rejects(readDistribution(write("d.metadata", "Metadata-Version: 2.1\nName: d\n"), "metadata"), refusal(/d\.metadata: not Python core metadata \(no Version header\)/));
});

test("the tar reader finds an entry behind a long (pax) name and stops at the archive's end", async () => {
  const tree = join(dir, "long");
  const deep = join(tree, `p-1.0`, "d".repeat(120));
  mkdirSync(deep, { recursive: true });
  writeFileSync(join(deep, "f.txt"), "skipped");
  writeFileSync(join(tree, "p-1.0", "PKG-INFO"), "Metadata-Version: 2.1\nName: p\nVersion: 1.0\n");
  const tarball = join(dir, "long.tar");
  execFileSync("tar", ["--format=pax", "-cf", tarball, "-C", tree, "p-1.0"]);
  const chunks = [readFileSync(tarball)];
  const found = await findTarEntry(chunks, (p) => p === "p-1.0/PKG-INFO", { limit: 1024, maxScan: 1 << 20 });
  assert.ok(found && "bytes" in found && found.bytes.toString().startsWith("Metadata-Version"));
  assert.equal(await findTarEntry(chunks, (p) => p === "absent", { limit: 1024, maxScan: 1 << 20 }), undefined);
  const long = await findTarEntry(chunks, (p) => p.endsWith("/f.txt"), { limit: 1024, maxScan: 1 << 20 });
  assert.equal(long?.path, `p-1.0/${"d".repeat(120)}/f.txt`);
  assert.deepEqual(await findTarEntry(chunks, (p) => p === "p-1.0/PKG-INFO", { limit: 4, maxScan: 1 << 20 }), { path: "p-1.0/PKG-INFO", tooLarge: true });
});

test("a project from several distributions: one version each, names equal under PEP 503, the latest's name and summary", () => {
  const dist = (name: string, version: string, summary: string, sizeBytes = 0) => ({ metadata: { name, version, summary }, sizeBytes });
  const pkg = pypiProjectOf([dist("deprecated", "1.3.1", "new", 10), dist("Deprecated", "1.2.18", "old", 5), dist("Deprecated", "1.2.18", "old", 7), dist("Deprecated", "2.0rc1", "pre")]);
  assert.equal(pkg.name, "deprecated");
  assert.equal(pkg.description, "new");
  assert.deepEqual(pkg.versions, [
    { version: "1.3.1", sizeBytes: 10, description: "new" },
    { version: "1.2.18", sizeBytes: 7, description: "old" },
    { version: "2.0rc1", sizeBytes: 0, description: "pre" },
  ]);
});

test("Maven metadata written by maven-install-plugin, and group and SNAPSHOT metadata that list no artifact", () => {
  const guava = parseMavenMetadata(readFileSync(join(MAVEN, "com/google/guava/guava/maven-metadata-local.xml"), "utf8"), "guava");
  assert.equal(guava?.groupId, "com.google.guava");
  assert.equal(guava?.artifactId, "guava");
  assert.equal(guava?.versions.length, 21);
  assert.equal(parseMavenMetadata("<metadata><plugins><plugin><prefix>x</prefix></plugin></plugins></metadata>", "g"), undefined);
  const snapshot = "<metadata><groupId>a</groupId><artifactId>b</artifactId><version>1.0-SNAPSHOT</version><versioning><snapshot><timestamp>20240101.000000</timestamp><buildNumber>1</buildNumber></snapshot></versioning></metadata>";
  assert.equal(parseMavenMetadata(snapshot, "s"), undefined);
  assert.throws(() => parseMavenMetadata("<metadata><groupId>a", "t"), refusal(/^t: not Maven repository metadata: line \d+: /));
  assert.throws(() => parseMavenMetadata("<project/>", "u"), refusal(/^u: not Maven repository metadata \(no <metadata> root\)$/));
  assert.throws(() => parseMavenMetadata("<metadata><groupId>a b</groupId><artifactId>b</artifactId></metadata>", "v"), refusal(/^v: groupId: "a b" is not a Maven groupId$/));
  assert.throws(() => parseMavenMetadata("<metadata><groupId>a</groupId><artifactId>b</artifactId><versioning><versions/></versioning></metadata>", "w"), refusal(/^w: versioning\.versions lists no version$/));
  const escape = "<metadata><groupId>a</groupId><artifactId>b</artifactId><versioning><versions><version>1.0</version><version>../../x</version></versions></versioning></metadata>";
  assert.throws(() => parseMavenMetadata(escape, "x"), refusal(/^x: versioning\.versions\.version\[1\]: "\.\.\/\.\.\/x" is not a Maven version$/));
});

test("a POM: its description, else its name; packaging", () => {
  const asm = parsePom(readFileSync(join(MAVEN, "org/ow2/asm/asm/9.9/asm-9.9.pom"), "utf8"), "asm");
  assert.deepEqual(asm, { artifactId: "asm", description: "ASM, a very small and fast Java bytecode manipulation framework", packaging: "jar" });
  assert.deepEqual(parsePom("<project><artifactId>x</artifactId><name>X\n   tool</name><packaging>pom</packaging></project>", "p"), { artifactId: "x", description: "X tool", packaging: "pom" });
  assert.throws(() => parsePom("<metadata/>", "q"), refusal(/^q: not a POM \(no <project> root\)$/));
});

test("a Maven artifact from a repository folder: versions of every metadata file there, POMs beside them, Maven's ordering", async () => {
  const asm = await readMavenArtifact([join(MAVEN, "org/ow2/asm/asm/maven-metadata-local.xml")]);
  assert.equal(asm?.name, "org.ow2.asm:asm");
  assert.equal(asm?.description, "ASM, a very small and fast Java bytecode manipulation framework");
  assert.equal(asm?.versions.length, 12);
  assert.ok(asm?.versions.every((v) => v.description && v.sizeBytes === 0));

  const folder = join(dir, "repo/org/example/demo");
  mkdirSync(join(folder, "1.0"), { recursive: true });
  const metadata = (versions: string[]) => `<metadata><groupId>org.example</groupId><artifactId>demo</artifactId><versioning><versions>${versions.map((v) => `<version>${v}</version>`).join("")}</versions></versioning></metadata>`;
  writeFileSync(join(folder, "maven-metadata-local.xml"), metadata(["1.0", "2.0-M1"]));
  writeFileSync(join(folder, "maven-metadata-central.xml"), metadata(["1.0", "1.1"]));
  writeFileSync(join(folder, "1.0", "demo-1.0.pom"), "<project><artifactId>demo</artifactId><description>Demo</description></project>");
  writeFileSync(join(folder, "1.0", "demo-1.0.jar"), "x".repeat(1234));
  const demo = await readMavenArtifact([join(folder, "maven-metadata-central.xml"), join(folder, "maven-metadata-local.xml")]);
  assert.deepEqual(demo, {
    ecosystem: "Maven",
    name: "org.example:demo",
    description: "Demo",
    versions: [{ version: "1.0", sizeBytes: 1234, description: "Demo" }, { version: "1.1", sizeBytes: 0 }, { version: "2.0-M1", sizeBytes: 0 }],
  });
  writeFileSync(join(folder, "1.0", "demo-1.0.pom"), "<project><artifactId>other</artifactId></project>");
  await assert.rejects(readMavenArtifact([join(folder, "maven-metadata-local.xml")]), refusal(/demo-1\.0\.pom: the POM of other, not of demo$/));
  writeFileSync(join(folder, "1.0", "demo-1.0.pom"), "<project><artifactId>demo");
  await assert.rejects(readMavenArtifact([join(folder, "maven-metadata-local.xml")]), refusal(/demo-1\.0\.pom: not a POM: /));
  writeFileSync(join(folder, "maven-metadata-central.xml"), metadata(["1.0"]).replace("demo", "other"));
  await assert.rejects(readMavenArtifact([join(folder, "maven-metadata-local.xml"), join(folder, "maven-metadata-central.xml")]), refusal(/maven-metadata-central\.xml: lists org\.example:other, where maven-metadata-local\.xml beside it lists org\.example:demo$/));
});
