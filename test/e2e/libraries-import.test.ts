import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { promisify } from "node:util";
import { openStore } from "../../src/server/open-store.js";
import { BIN, inRepo } from "../support/repo.js";

/** `platform-api libraries import` as a user runs it: a child process over a SQLite file. */

const execFileAsync = promisify(execFile);
const FIXTURES = inRepo("test/fixtures/libraries");
const dir = mkdtempSync(join(tmpdir(), "platform-api-libraries-"));
after(() => rmSync(dir, { recursive: true, force: true }));

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

async function cli(...args: string[]): Promise<Run> {
  try {
    const { stdout, stderr } = await execFileAsync(process.execPath, [BIN, ...args], { encoding: "utf8", env: { ...process.env, DATABASE_URL: "" } });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const e = error as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

/** A database with the organization `acme`. */
async function database(name: string): Promise<string> {
  const db = join(dir, `${name}.db`);
  const boot = await cli("bootstrap", "--org", "acme", "--db", db);
  assert.equal(boot.code, 0, boot.stderr);
  return db;
}

const importer = (db: string, ...args: string[]) => cli("libraries", "import", "--org", "acme", "--db", db, ...args);

async function artifacts(db: string) {
  const store = await openStore(db);
  try {
    return await store.db.selectFrom("artifacts").select(["ecosystem", "name", "latest_version", "version_count"]).orderBy("ecosystem").orderBy("name").execute();
  } finally {
    await store.close();
  }
}

let db: string;
before(async () => {
  db = await database("shipped");
});

test("the shipped npm, PyPI and Maven metadata import whole; a second run changes nothing", async () => {
  const folders = ["npm", "pypi", "maven"].map((f) => join(FIXTURES, f));
  const first = await importer(db, ...folders);
  assert.equal(first.code, 0, first.stderr);
  assert.equal(first.stdout, "read 64, new 64, updated 0, unchanged 0, rejected 0\n");
  assert.equal(first.stderr, "", "no progress line when stderr is not a terminal");
  const stored = await artifacts(db);
  const perEcosystem = new Map<string, number>();
  for (const a of stored) perEcosystem.set(a.ecosystem, (perEcosystem.get(a.ecosystem) ?? 0) + 1);
  assert.deepEqual([...perEcosystem], [["Maven", 8], ["PyPI", 22], ["npm", 34]]);
  assert.deepEqual(stored.find((a) => a.name === "org.ow2.asm:asm"), { ecosystem: "Maven", name: "org.ow2.asm:asm", latest_version: "9.10.1", version_count: 12 });
  const second = await importer(db, ...folders);
  assert.equal(second.stdout, "read 64, new 0, updated 0, unchanged 64, rejected 0\n");
  assert.deepEqual(await artifacts(db), stored);
});

test("files given one by one: a wheel, an sdist, a PKG-INFO and a maven-metadata file; changed metadata updates its artifact", async () => {
  const own = await database("files");
  const pypi = join(FIXTURES, "pypi");
  const files = [
    join(pypi, "six-1.17.0-py2.py3-none-any.whl"),
    join(pypi, "six-1.16.0.egg-info", "PKG-INFO"),
    join(pypi, "wheel-0.38.4.tar.gz"),
    join(FIXTURES, "maven", "org", "ow2", "asm", "asm", "maven-metadata-local.xml"),
  ];
  assert.equal((await importer(own, ...files)).stdout, "read 3, new 3, updated 0, unchanged 0, rejected 0\n");
  assert.deepEqual(
    (await artifacts(own)).map((a) => [a.name, a.latest_version, a.version_count]),
    [["org.ow2.asm:asm", "9.10.1", 12], ["six", "1.17.0", 2], ["wheel", "0.38.4", 1]],
  );
  const more = await importer(own, ...files, join(pypi, "wheel-0.48.0-py3-none-any.whl.metadata"));
  assert.equal(more.stdout, "read 3, new 0, updated 1, unchanged 2, rejected 0\n", "wheel gained 0.48.0");
  assert.deepEqual((await artifacts(own)).find((a) => a.name === "wheel"), { ecosystem: "PyPI", name: "wheel", latest_version: "0.48.0", version_count: 2 });
});

test("malformed files are reported on stderr with their reason and skipped; the rest is stored", async () => {
  const own = await database("bad");
  const feed = join(dir, "bad");
  mkdirSync(join(feed, "repo", "org", "example", "broken"), { recursive: true });
  copyFileSync(join(FIXTURES, "npm", "ms.json"), join(feed, "a-ms.json"));
  writeFileSync(join(feed, "b-broken.json"), "{ not json");
  writeFileSync(join(feed, "c-1.0-py3-none-any.whl"), "not a zip");
  writeFileSync(join(feed, "d-1.0.whl.metadata"), "Metadata-Version: 2.1\nName: d\nVersion: soon\n");
  writeFileSync(join(feed, "repo", "org", "example", "broken", "maven-metadata.xml"), "<metadata><groupId>org.example</groupId>");
  copyFileSync(join(FIXTURES, "pypi", "zipp-4.1.0-py3-none-any.whl.metadata"), join(feed, "e-zipp-4.1.0-py3-none-any.whl.metadata"));
  writeFileSync(join(feed, "notes.txt"), "ignored: not metadata");
  const run = await importer(own, feed);
  assert.equal(run.code, 0);
  assert.equal(run.stdout, "read 6, new 2, updated 0, unchanged 0, rejected 4\n");
  const lines = run.stderr.trim().split("\n");
  assert.equal(lines.length, 4, run.stderr);
  assert.match(lines[0], /^rejected .*b-broken\.json: not JSON$/);
  assert.match(lines[1], /^rejected .*c-1\.0-py3-none-any\.whl: not a wheel \(zip\): /);
  assert.match(lines[2], /^rejected .*d-1\.0\.whl\.metadata: Version: "soon" is not a PEP 440 version$/);
  assert.match(lines[3], /^rejected .*broken\/maven-metadata\.xml: not Maven repository metadata: line 1: /);
  assert.deepEqual((await artifacts(own)).map((a) => a.name), ["zipp", "ms"]);
});

test("--strict stops at the first refused file and exits 1; usage errors exit 2 and import nothing", async () => {
  const own = await database("strict");
  const feed = join(dir, "strict");
  mkdirSync(feed);
  copyFileSync(join(FIXTURES, "npm", "ms.json"), join(feed, "a.json"));
  writeFileSync(join(feed, "b.json"), JSON.stringify({ name: "Not A Name!", versions: {} }));
  copyFileSync(join(FIXTURES, "npm", "once.json"), join(feed, "c.json"));
  const strict = await importer(own, "--strict", feed);
  assert.equal(strict.code, 1);
  assert.equal(strict.stdout, "read 2, new 0, updated 0, unchanged 0, rejected 1\n");
  assert.match(strict.stderr, /rejected .*b\.json: name: "Not A Name!" is not an npm package name/);
  assert.match(strict.stderr, /--strict: stopped at a refused document/);
  assert.deepEqual(await artifacts(own), [], "the batch in progress was not written");

  const missing = await importer(own, feed, join(dir, "no-such-folder"));
  assert.equal(missing.code, 2);
  assert.match(missing.stderr, /no-such-folder: no such file or folder/);
  const unknownKind = await importer(own, join(FIXTURES, "README.md"));
  assert.equal(unknownKind.code, 2);
  assert.match(unknownKind.stderr, /README\.md: not a \.json document, a maven-metadata \.xml file, a Python distribution/);
  const noOrg = await cli("libraries", "import", "--db", own, feed);
  assert.equal(noOrg.code, 2);
  assert.match(noOrg.stderr, /--org is required/);
  const otherOrg = await cli("libraries", "import", "--org", "nobody", "--db", own, feed);
  assert.equal(otherOrg.code, 2);
  assert.match(otherOrg.stderr, /--org nobody: no organization has this name/);
  const none = await importer(own);
  assert.equal(none.code, 2);
  assert.match(none.stderr, /give at least one metadata file or folder/);
  assert.deepEqual(await artifacts(own), []);
});
