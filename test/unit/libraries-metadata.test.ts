import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";
import { parseLibraryDocument } from "../../src/engines/package-feeds/feed.js";
import { LibraryDocumentError } from "../../src/engines/package-feeds/library-package.js";
import { isPrerelease, latestVersion } from "../../src/engines/package-feeds/versions.js";
import { inRepo } from "../support/repo.js";

const fixture = (name: string) => readFileSync(inRepo(`test/fixtures/libraries/npm/${name}`), "utf8");

test("an npm registry document and an `npm view --json` document both parse", () => {
  const minimist = parseLibraryDocument(fixture("minimist.json"), "minimist.json");
  assert.equal(minimist.ecosystem, "npm");
  assert.equal(minimist.description, "parse argument options", "from the latest manifest when the document has none at the top");
  assert.equal(minimist.versions.length, 31);
  assert.ok(minimist.versions.every((v) => typeof v.publishTime === "number"));
  const qs = parseLibraryDocument(fixture("qs.view.json"), "qs.view.json");
  assert.equal(qs.name, "qs");
  assert.ok(qs.versions.length > 50);
  assert.ok(qs.versions.some((v) => v.version === "6.17.1"));
});

test("a PyPI JSON API document (constructed after the API's documented shape, not fetched: pypi.org is unreachable here)", () => {
  const doc = {
    info: { name: "requests", summary: "Python HTTP for Humans.", version: "2.32.3", license: "Apache-2.0" },
    last_serial: 1,
    releases: {
      "2.31.0": [
        { filename: "requests-2.31.0-py3-none-any.whl", size: 62574, upload_time_iso_8601: "2023-05-22T15:12:42.313790Z", packagetype: "bdist_wheel" },
        { filename: "requests-2.31.0.tar.gz", size: 110794, upload_time_iso_8601: "2023-05-22T15:12:44.175626Z", packagetype: "sdist" },
      ],
      "2.32.0rc1": [{ filename: "requests-2.32.0rc1.tar.gz", size: 131000, upload_time_iso_8601: "2024-05-14T00:00:00Z" }],
      "2.32.3": [{ filename: "requests-2.32.3.tar.gz", size: 131218, upload_time_iso_8601: "2024-05-29T15:37:49.536299Z" }],
      "0.0.1": [],
    },
    urls: [],
    vulnerabilities: [],
  };
  const pkg = parseLibraryDocument(JSON.stringify(doc), "requests.json");
  assert.equal(pkg.ecosystem, "PyPI");
  assert.equal(pkg.description, "Python HTTP for Humans.");
  const v231 = pkg.versions.find((v) => v.version === "2.31.0")!;
  assert.equal(v231.sizeBytes, 110794, "the largest file");
  assert.equal(v231.publishTime, Date.parse("2023-05-22T15:12:42.313790Z"), "the earliest upload");
  assert.equal(pkg.versions.find((v) => v.version === "0.0.1")!.publishTime, undefined);
});

test("documents that are not package metadata are refused naming the file", () => {
  assert.throws(() => parseLibraryDocument("{", "a.json"), (e) => e instanceof LibraryDocumentError && e.message === "a.json: not JSON");
  assert.throws(() => parseLibraryDocument('{"name":"x"}', "b.json"), /b.json: not an npm package document/);
  assert.throws(() => parseLibraryDocument('{"info":{"name":"bad name!"},"releases":{}}', "c.json"), /c.json: info.name/);
});

test("latest version: the highest that is not a prerelease, in the ecosystem's ordering", () => {
  assert.equal(latestVersion("npm", ["1.2.10", "1.2.9", "2.0.0-beta.1"]), "1.2.10");
  assert.equal(latestVersion("npm", ["2.0.0-beta.1", "2.0.0-alpha"]), "2.0.0-beta.1");
  assert.equal(latestVersion("PyPI", ["2.31.0", "2.32.0rc1", "2.9", "2.31.0.post1"]), "2.31.0.post1");
  assert.equal(latestVersion("Maven", ["1.0", "1.10", "2.0-SNAPSHOT", "2.0-RC1", "1.9"]), "1.10");
  assert.ok(isPrerelease("PyPI", "1.0.dev3"));
  assert.ok(!isPrerelease("PyPI", "1.0.post2"));
  assert.ok(isPrerelease("Maven", "3.0.0-M1"));
  assert.ok(!isPrerelease("Maven", "5.3.1.Final") && !isPrerelease("Maven", "32.1.3-jre"));
});

test("a metadata file that is not UTF-8 is refused alone (as the advisory import refuses one), never stored with its bytes replaced", async () => {
  const { mkdtempSync, rmSync, writeFileSync } = await import("node:fs");
  const { tmpdir } = await import("node:os");
  const { join } = await import("node:path");
  const { readLibraryFeed } = await import("../../src/engines/package-feeds/feed.js");
  const dir = mkdtempSync(join(tmpdir(), "libraries-utf8-"));
  try {
    writeFileSync(join(dir, "bad.json"), Buffer.concat([Buffer.from('{"name":"bad","description":"'), Buffer.from([0xff, 0xfe]), Buffer.from('","versions":{}}')]));
    writeFileSync(join(dir, "good.json"), JSON.stringify({ name: "good", "dist-tags": { latest: "1.0.0" }, versions: { "1.0.0": { name: "good", version: "1.0.0" } } }));
    const entries = [];
    for await (const entry of readLibraryFeed([dir])) entries.push(entry);
    const bad = entries.find((e) => e.source.endsWith("bad.json"))!;
    assert.ok(bad.error instanceof LibraryDocumentError);
    assert.match(bad.error.message, /not UTF-8 text/);
    assert.equal(entries.find((e) => e.source.endsWith("good.json"))?.item?.name, "good");
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
