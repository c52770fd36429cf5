import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { test } from "node:test";
import { OsvRecordError } from "../../src/engines/advisories/osv/errors.js";
import { parseOsvDocument, parseOsvRecord } from "../../src/engines/advisories/osv/parse.js";
import { compareOsvTimes, osvTimeMillis, parseOsvTime } from "../../src/engines/advisories/osv/time.js";

// Real records, CC0: the RustSec advisory database in OSV form, beside the repository (CI clones it there too).
const RUSTSEC = resolve("../shared/data/osv/rustsec/crates");

// Records are built and broken freely here, wrong types included.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Loose = any;

function valid(): Loose {
  return {
    schema_version: "1.6.0",
    id: "GHSA-aaaa-bbbb-cccc",
    modified: "2024-05-01T10:00:00Z",
    published: "2024-04-01T10:00:00Z",
    aliases: ["CVE-2024-0001"],
    related: [],
    summary: "A problem",
    details: "Details\nin Markdown.",
    severity: [{ type: "CVSS_V3", score: "CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:H/I:H/A:H" }],
    affected: [
      {
        package: { ecosystem: "npm", name: "left-pad", purl: "pkg:npm/left-pad" },
        ranges: [
          { type: "SEMVER", events: [{ introduced: "0" }, { fixed: "1.3.0" }] },
          { type: "ECOSYSTEM", events: [{ introduced: "2.0" }, { last_affected: "2.1" }, { limit: "3" }] },
          { type: "GIT", repo: "https://github.com/x/y", events: [{ introduced: "abc123" }, { fixed: "def456" }] },
        ],
        versions: ["1.0.0", "1.1.0", "1.2.0", "2.0"],
        ecosystem_specific: { anything: [1, null] },
        database_specific: { source: "x" },
      },
    ],
    references: [{ type: "ADVISORY", url: "https://example.com/a" }],
    credits: [{ name: "Someone", contact: ["mailto:a@example.com"], type: "FINDER" }],
    database_specific: { license: "CC0-1.0" },
  };
}

/** Applies `change` to a fresh valid record and returns the error its parsing throws. */
function errorFor(change: (r: Loose) => void, options = {}): OsvRecordError {
  const record = valid();
  change(record);
  try {
    parseOsvRecord(record, "t.json", options);
  } catch (error) {
    assert.ok(error instanceof OsvRecordError, String(error));
    return error;
  }
  assert.fail("the record was accepted");
}

test("every RustSec record parses, unchanged", () => {
  const files = readdirSync(RUSTSEC).filter((f) => f.endsWith(".json"));
  assert.equal(files.length, 1206);
  let withdrawn = 0;
  for (const file of files) {
    const bytes = readFileSync(join(RUSTSEC, file));
    const record = parseOsvDocument(bytes, file);
    assert.deepEqual(record, JSON.parse(bytes.toString("utf8")), file);
    assert.equal(`${record.id}.json`, file);
    if (record.withdrawn) withdrawn++;
  }
  assert.equal(withdrawn, 13);
});

test("a valid record comes back equal; null optional fields are dropped; unknown fields are kept", () => {
  assert.deepEqual(parseOsvRecord(valid(), "t.json"), valid());
  const input: Loose = { ...valid(), aliases: null, severity: null, upstream: ["CVE-2024-0002"], later_field: { x: 1 } };
  (input.affected as Loose)[0].future = true;
  (input.affected as Loose)[0].package.purl = null;
  const record = parseOsvRecord(input, "t.json") as Loose;
  assert.ok(!("aliases" in record) && !("severity" in record));
  assert.ok(!("purl" in record.affected[0].package));
  assert.deepEqual(record.upstream, ["CVE-2024-0002"]);
  assert.deepEqual(record.later_field, { x: 1 });
  assert.equal(record.affected[0].future, true);
  assert.ok("aliases" in input, "the input is not changed");
});

test("only id and modified are required", () => {
  const record = parseOsvRecord({ id: "OSV-2020-111", modified: "2021-01-01T00:00:00.123456789Z" }, "t.json");
  assert.equal(record.id, "OSV-2020-111");
});

const cases: [string, (r: Loose) => void, string, RegExp][] = [
  ["id missing", (r) => delete r.id, "id", /is required/],
  ["id not a string", (r) => (r.id = 7), "id", /must be a string, not a number/],
  ["id with a space", (r) => (r.id = "GHSA 1"), "id", /is not an OSV id/],
  ["id with a slash", (r) => (r.id = "../etc"), "id", /is not an OSV id/],
  ["id too long", (r) => (r.id = "A".repeat(257)), "id", /257 characters long; at most 256/],
  ["modified missing", (r) => delete r.modified, "modified", /is required/],
  ["modified month 13", (r) => (r.modified = "2024-13-01T00:00:00Z"), "modified", /not an RFC 3339 date-time/],
  ["modified 30 February", (r) => (r.modified = "2024-02-30T00:00:00Z"), "modified", /not an RFC 3339/],
  ["modified a date only", (r) => (r.modified = "2024-02-03"), "modified", /not an RFC 3339/],
  ["modified without a zone", (r) => (r.modified = "2024-02-03T00:00:00"), "modified", /not an RFC 3339/],
  ["published malformed", (r) => (r.published = "yesterday"), "published", /not an RFC 3339/],
  ["withdrawn not a string", (r) => (r.withdrawn = 1714557600), "withdrawn", /must be a string/],
  ["schema_version a number", (r) => (r.schema_version = 1.6), "schema_version", /must be a string/],
  ["aliases not an array", (r) => (r.aliases = "CVE-1"), "aliases", /must be an array, not a string/],
  ["an alias with a space", (r) => (r.aliases = ["CVE-1", "CVE 2"]), "aliases[1]", /whitespace/],
  ["related not strings", (r) => (r.related = [{ id: "X" }]), "related[0]", /must be a string, not an object/],
  ["too many aliases", (r) => (r.aliases = Array.from({ length: 10_001 }, (_, i) => `CVE-${i}`)), "aliases", /10001 entries; at most 10000/],
  ["summary too long", (r) => (r.summary = "x".repeat(8193)), "summary", /at most 8192/],
  ["details an array", (r) => (r.details = ["a"]), "details", /must be a string, not an array/],
  ["severity type missing", (r) => delete r.severity[0].type, "severity[0].type", /is required/],
  ["severity score empty", (r) => (r.severity[0].score = ""), "severity[0].score", /must not be empty/],
  ["severity type with spaces", (r) => (r.severity[0].type = "CVSS V3"), "severity[0].type", /not a type name/],
  ["affected an object", (r) => (r.affected = {}), "affected", /must be an array, not an object/],
  ["affected entry a string", (r) => (r.affected = ["npm"]), "affected[0]", /must be an object, not a string/],
  ["package without ecosystem", (r) => delete r.affected[0].package.ecosystem, "affected[0].package.ecosystem", /is required/],
  ["unknown ecosystem", (r) => (r.affected[0].package.ecosystem = "nmp"), "affected[0].package.ecosystem", /"nmp" is not an OSV ecosystem$/],
  ["ecosystem in the wrong case", (r) => (r.affected[0].package.ecosystem = "pypi"), "affected[0].package.ecosystem", /did you mean "PyPI"/],
  ["package without name", (r) => delete r.affected[0].package.name, "affected[0].package.name", /is required/],
  ["package name with a newline", (r) => (r.affected[0].package.name = "a\nb"), "affected[0].package.name", /control characters/],
  ["purl without pkg:", (r) => (r.affected[0].package.purl = "npm/left-pad"), "affected[0].package.purl", /not a package URL/],
  ["ranges not an array", (r) => (r.affected[0].ranges = { type: "SEMVER" }), "affected[0].ranges", /must be an array/],
  ["range type unknown", (r) => (r.affected[0].ranges[1].type = "SEMVER2"), "affected[0].ranges[1].type", /not a range type/],
  ["range type missing", (r) => delete r.affected[0].ranges[0].type, "affected[0].ranges[0].type", /is required/],
  ["GIT range without repo", (r) => delete r.affected[0].ranges[2].repo, "affected[0].ranges[2].repo", /is required/],
  ["events missing", (r) => delete r.affected[0].ranges[0].events, "affected[0].ranges[0].events", /is required/],
  ["events empty", (r) => (r.affected[0].ranges[0].events = []), "affected[0].ranges[0].events", /at least one event/],
  [
    "an event with two keys",
    (r) => (r.affected[0].ranges[1].events[2] = { fixed: "3", limit: "4" }),
    "affected[0].ranges[1].events[2]",
    /^an event has exactly one of introduced, fixed, last_affected, limit$/,
  ],
  ["an event with none", (r) => (r.affected[0].ranges[0].events[1] = { fix: "1" }), "affected[0].ranges[0].events[1]", /exactly one of/],
  ["an event value a number", (r) => (r.affected[0].ranges[1].events[0] = { introduced: 2 }), "affected[0].ranges[1].events[0].introduced", /must be a string/],
  ["an event value empty", (r) => (r.affected[0].ranges[1].events[0] = { introduced: "" }), "affected[0].ranges[1].events[0].introduced", /must not be empty/],
  ["no introduced event", (r) => (r.affected[0].ranges[0].events = [{ fixed: "1.0.0" }]), "affected[0].ranges[0].events", /must have an "introduced" event/],
  [
    "fixed and last_affected together",
    (r) => r.affected[0].ranges[1].events.push({ fixed: "9" }),
    "affected[0].ranges[1].events",
    /both "fixed" and "last_affected"/,
  ],
  ["SEMVER version with a v", (r) => (r.affected[0].ranges[0].events[1] = { fixed: "v1.3.0" }), "affected[0].ranges[0].events[1].fixed", /not a SemVer 2.0 version/],
  ["SEMVER version with two parts", (r) => (r.affected[0].ranges[0].events[0] = { introduced: "1.2" }), "affected[0].ranges[0].events[0].introduced", /not a SemVer/],
  ["version too long", (r) => (r.affected[0].versions[0] = "1".repeat(1025)), "affected[0].versions[0]", /at most 1024/],
  ["version empty", (r) => (r.affected[0].versions[3] = ""), "affected[0].versions[3]", /must not be empty/],
  ["too many versions", (r) => (r.affected[0].versions = Array.from({ length: 100_001 }, (_, i) => `${i}`)), "affected[0].versions", /at most 100000/],
  ["ecosystem_specific an array", (r) => (r.affected[0].ecosystem_specific = []), "affected[0].ecosystem_specific", /must be an object, not an array/],
  ["range database_specific a string", (r) => (r.affected[0].ranges[0].database_specific = "x"), "affected[0].ranges[0].database_specific", /must be an object/],
  ["database_specific a string", (r) => (r.database_specific = "CC0"), "database_specific", /must be an object, not a string/],
  ["reference url relative", (r) => (r.references[0].url = "/advisories/1"), "references[0].url", /not an absolute URL/],
  ["reference type with a space", (r) => (r.references[0].type = "SEE ALSO"), "references[0].type", /not a type name/],
  ["reference without url", (r) => delete r.references[0].url, "references[0].url", /is required/],
  ["credit without name", (r) => delete r.credits[0].name, "credits[0].name", /is required/],
  ["credit contact a number", (r) => (r.credits[0].contact = [5]), "credits[0].contact[0]", /must be a string/],
];

for (const [name, change, path, reason] of cases) {
  test(`refused: ${name} (at ${path})`, () => {
    const error = errorFor(change);
    assert.equal(error.kind, "invalid");
    assert.equal(error.path, path);
    assert.match(error.reason, reason);
    assert.equal(error.message, `t.json: ${path}: ${error.reason}`);
  });
}

test("the first problem in schema order is the one reported", () => {
  const error = errorFor((r) => {
    r.affected[0].versions = [1];
    r.references[0].url = "nope";
    r.modified = "bad";
  });
  assert.equal(error.path, "modified");
});

test("allowed: ecosystems with suffixes, ECOSYSTEM and GIT versions that are not SemVer, a package-less GIT entry", () => {
  for (const ecosystem of ["Debian:12", "Ubuntu:Pro:18.04:LTS", "Maven:https://maven.google.com", "crates.io", "Alpine:v3.19"]) {
    const r = valid() as Loose;
    r.affected[0].package.ecosystem = ecosystem;
    assert.equal(parseOsvRecord(r, "t.json").affected![0].package!.ecosystem, ecosystem);
  }
  const r = valid() as Loose;
  r.affected = [{ ranges: [{ type: "GIT", repo: "https://git.example/x", events: [{ introduced: "0" }, { limit: "abc" }] }], versions: ["v1.0"] }];
  r.affected[0].ranges.push({ type: "SEMVER", events: [{ introduced: "1.0.0-rc.1+build.5" }, { last_affected: "1.0.0" }, { limit: "*" }] });
  assert.doesNotThrow(() => parseOsvRecord(r, "t.json"));
});

test("allowUnknownEcosystems accepts an ecosystem the schema does not define", () => {
  const r = valid() as Loose;
  r.affected[0].package.ecosystem = "Homebrew";
  assert.throws(() => parseOsvRecord(r, "t.json"), /not an OSV ecosystem/);
  assert.doesNotThrow(() => parseOsvRecord(r, "t.json", { allowUnknownEcosystems: true }));
});

test("a JSON document that is not an OSV record is refused as such", () => {
  const documents: [unknown, RegExp][] = [
    [{ name: "platform-api", version: "0.1.0", dependencies: {} }, /package manifest \(package\.json\)/],
    [{ bomFormat: "CycloneDX", specVersion: "1.5", components: [] }, /CycloneDX SBOM/],
    [{ spdxVersion: "SPDX-2.3", packages: [] }, /SPDX document/],
    [{ vulns: [valid()] }, /osv\.dev API response/],
    [[valid(), valid()], /JSON array of records \(give one record per file\)/],
    [[1, 2], /a JSON array$/],
    ["GHSA-1", /a string, not an object/],
    [null, /null, not an object/],
    [{ title: "x", body: "y" }, /neither "id" nor "modified" \(its keys: "title", "body"\)/],
  ];
  for (const [document, reason] of documents) {
    assert.throws(
      () => parseOsvRecord(document, "x.json"),
      (error: unknown) => error instanceof OsvRecordError && error.kind === "not-osv" && error.path === "" && reason.test(error.message) && error.message.startsWith("x.json: not an OSV record: the document is "),
      JSON.stringify(document).slice(0, 60),
    );
  }
});

test("parseOsvDocument: UTF-8 JSON with an optional byte order mark; anything else is not-json", () => {
  const text = JSON.stringify(valid());
  assert.equal(parseOsvDocument(Buffer.from(text), "t.json").id, "GHSA-aaaa-bbbb-cccc");
  assert.equal(parseOsvDocument(Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(text)]), "t.json").id, "GHSA-aaaa-bbbb-cccc");
  for (const [bytes, reason] of [
    [Buffer.from("{ not json"), /^t\.json: not JSON: /],
    [Buffer.from([0x7b, 0xff, 0xfe, 0x7d]), /^t\.json: not UTF-8 text$/],
    [Buffer.alloc(0), /not JSON/],
  ] as const) {
    assert.throws(() => parseOsvDocument(bytes, "t.json"), (e: unknown) => e instanceof OsvRecordError && e.kind === "not-json" && reason.test(e.message));
  }
});

test("OSV times: RFC 3339 with offsets and fractions, compared exactly", () => {
  assert.equal(compareOsvTimes("2024-01-01T01:00:00+01:00", "2024-01-01T00:00:00Z"), 0);
  assert.ok(compareOsvTimes("2024-01-01T00:00:00.000000001Z", "2024-01-01T00:00:00Z") > 0);
  assert.ok(compareOsvTimes("2024-01-01T00:00:05Z", "2024-01-01T00:00:05.1Z") < 0);
  assert.ok(compareOsvTimes("2023-12-31T23:59:59-01:00", "2024-01-01T00:00:00Z") > 0);
  assert.equal(osvTimeMillis("1970-01-01T00:00:01.5Z"), 1500);
  assert.equal(osvTimeMillis("0099-01-01T00:00:00Z"), Date.parse("0099-01-01T00:00:00Z"));
  assert.equal(parseOsvTime("2024-02-29T00:00:00z")?.nanos, 0);
  for (const bad of ["2023-02-29T00:00:00Z", "2024-01-01T24:00:00Z", "2024-01-01T00:00:00+25:00", "2024-01-01T00:00:00.Z", "2024-01-01 00:00:00Z", " 2024-01-01T00:00:00Z"]) {
    assert.equal(parseOsvTime(bad), undefined, bad);
  }
  assert.throws(() => compareOsvTimes("x", "2024-01-01T00:00:00Z"), TypeError);
});
