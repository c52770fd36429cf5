import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import type { JsonObject } from "@bufbuild/protobuf";
import { SecurityAdvisoryService } from "../../gen/platform/advisory/v2/security_advisory_service_pb.js";
import { AdvisoriesService } from "../../gen/platform/vulnerabilities/v2/advisories_service_pb.js";
import { isVulnerable } from "../../src/engines/advisories/affected.js";
import { readOsvFeed } from "../../src/engines/advisories/osv/feed.js";
import type { OsvRecord } from "../../src/engines/advisories/osv/record.js";
import { advisoryUid } from "../../src/domains/vulnerabilities/advisory-rows.js";
import { importOsvFeed } from "../support/osv-import.js";
import { feedOf, osvRecord, RUSTSEC_DIR } from "../support/osv-records.js";
import { serveOverWires } from "../support/over-wires.js";
import type { TestServer } from "../support/test-server.js";
import { detailOf, methodOf, reasonOf, violatedFields as fieldsOf, queryString as query } from "../support/wires.js";

/** AdvisoriesService and SecurityAdvisoryService over every wire, on the shipped RustSec feed plus a few records of other ecosystems. */

const rustsec = readdirSync(join(RUSTSEC_DIR, "crates")).map((f) => JSON.parse(readFileSync(join(RUSTSEC_DIR, "crates", f), "utf8")) as OsvRecord);
const served = rustsec.filter((r) => !r.withdrawn).length;

/** The RustSec feed, then a PyPI and a Debian record. */
async function importFeeds(server: TestServer): Promise<void> {
  await importOsvFeed(server.store.db, readOsvFeed([RUSTSEC_DIR]));
  await importOsvFeed(
    server.store.db,
    feedOf(
      osvRecord("PYSEC-2099-1", {
        aliases: ["CVE-2099-0001"],
        affected: [{ package: { ecosystem: "PyPI", name: "openssl" }, ranges: [{ type: "ECOSYSTEM", events: [{ introduced: "0" }, { fixed: "1.0.post1" }] }] }],
      }),
      osvRecord("DEBIAN-2099-1", {
        affected: [{ package: { ecosystem: "Debian:12", name: "openssl" }, ranges: [{ type: "ECOSYSTEM", events: [{ introduced: "0" }, { fixed: "3.0.11-1~deb12u2" }] }] }],
      }),
    ),
  );
}

const servedWires = serveOverWires({ prepare: importFeeds });

servedWires.describeOverWires("AdvisoriesService", ({ server, wire, wireName }) => {
  /** ListAdvisories with proto-JSON `request`; over REST the same as query parameters (`rest` overrides them). */
  /** `token` "" sends none. */
  const list = (request: JsonObject, rest?: string, token = server().ownerToken) =>
    wire().call(
      methodOf(AdvisoriesService, "ListAdvisories"),
      request,
      { method: "GET", path: `/vulnerabilities/v2/advisories?${rest ?? query(request as Record<string, string>)}` },
      token,
    );
  const get = (uid: string, token = server().ownerToken) =>
    wire().call(methodOf(AdvisoriesService, "GetAdvisory"), { uid }, { method: "GET", path: `/vulnerabilities/v2/advisories/${uid}` }, token);
  const ids = (out: { body?: JsonObject }) => ((out.body?.advisories as JsonObject[] | undefined) ?? []).map((a) => `${a.advisoryId} ${a.ecosystem}/${a.artifactName}`);

  test("filter by artifact name: every ecosystem's package of that name; both spellings repeat over REST", async () => {
    const out = await list({ artifactNames: ["openssl"], orderBy: "advisory_id" });
    assert.equal(out.code, 0, out.message);
    const expected = rustsec.filter((r) => !r.withdrawn && r.affected?.some((a) => a.package?.name === "openssl")).map((r) => `${r.id} crates.io/openssl`);
    assert.deepEqual(ids(out), [...expected, "DEBIAN-2099-1 Debian:12/openssl", "PYSEC-2099-1 PyPI/openssl"].sort());
    assert.equal(out.body?.totalCount, String(expected.length + 2));

    const two = await list({ artifactNames: ["openssl", "openssl-src"], ecosystem: "crates.io" }, "artifactNames=openssl&artifact_names=openssl-src&ecosystem=crates.io");
    const names = new Set(((two.body?.advisories as JsonObject[]) ?? []).map((a) => a.artifactName));
    assert.deepEqual([...names].sort(), ["openssl", "openssl-src"]);
    const debian = await list({ artifactNames: ["openssl"], ecosystem: "Debian" });
    assert.deepEqual(ids(debian), ["DEBIAN-2099-1 Debian:12/openssl"], "an ecosystem without suffix matches its suffixes");
  });

  test("filter by advisory id or alias: a CVE finds the record that aliases it", async () => {
    const byCve = await list({ advisoryIds: ["CVE-2016-10931"] });
    assert.deepEqual(ids(byCve), ["RUSTSEC-2016-0001 crates.io/openssl"]);
    const mixed = await list({ advisoryIds: ["GHSA-34p9-f4q3-c4r7", "CVE-2099-0001", "NOPE-1"] }, "advisoryIds=GHSA-34p9-f4q3-c4r7&advisory_ids=CVE-2099-0001&advisoryIds=NOPE-1");
    assert.deepEqual(ids(mixed).sort(), ["PYSEC-2099-1 PyPI/openssl", "RUSTSEC-2016-0001 crates.io/openssl"]);
  });

  test("hosted filters: `aliases` finds records by alias only, `artifact_types` by ecosystem", async () => {
    const byAlias = await list({ aliases: ["CVE-2016-10931", "GHSA-34p9-f4q3-c4r7"] }, "aliases=CVE-2016-10931&aliases=GHSA-34p9-f4q3-c4r7");
    assert.equal(byAlias.code, 0, byAlias.message);
    assert.deepEqual(ids(byAlias), ["RUSTSEC-2016-0001 crates.io/openssl"]);
    const ownId = await list({ aliases: ["RUSTSEC-2016-0001"] });
    assert.equal(ownId.code, 0, ownId.message);
    assert.deepEqual(ids(ownId), [], "a record's own id is not one of its aliases");
    const types = await list({ artifactNames: ["openssl"], artifactTypes: ["PyPI", "Debian"], orderBy: "advisory_id" }, "artifactNames=openssl&artifact_types=PyPI&artifactTypes=Debian&orderBy=advisory_id");
    assert.deepEqual(ids(types), ["DEBIAN-2099-1 Debian:12/openssl", "PYSEC-2099-1 PyPI/openssl"]);
    const badType = await list({ artifactTypes: ["cargo"] });
    assert.deepEqual(fieldsOf(badType), ["artifact_types[0]"]);
  });

  test("hosted filters: `query` is text in the id, an alias, the package name or the summary, ignoring case", async () => {
    const expected = (text: string) =>
      rustsec
        .filter((r) => !r.withdrawn)
        .flatMap((r) =>
          [...new Set((r.affected ?? []).map((a) => a.package!.name))]
            .filter((name) => [r.id, ...(r.aliases ?? []), name, r.summary ?? ""].some((field) => field.toLowerCase().includes(text.toLowerCase())))
            .map((name) => `${r.id} crates.io/${name}`),
        )
        .sort();
    for (const text of ["SmallVec", "2016-1093", "use-after-free", "Use After Free"]) {
      const out = await list({ query: text, pageSize: 200, orderBy: "advisory_id" });
      assert.equal(out.code, 0, out.message);
      const want = expected(text);
      assert.ok(want.length > 0, text);
      assert.deepEqual(ids(out).sort(), want, text);
      assert.equal(out.body?.totalCount, String(want.length));
    }
    const python = await list({ query: "cve-2099-0001" });
    assert.deepEqual(ids(python), ["PYSEC-2099-1 PyPI/openssl"], "an alias of another ecosystem's record");
    const literal = await list({ query: "100%_" }, "query=100%25_");
    assert.equal(literal.code, 0, literal.message);
    assert.deepEqual(ids(literal), [], "% and _ are literal");
    const long = await list({ query: "x".repeat(201) });
    assert.deepEqual(fieldsOf(long), ["query"]);
  });

  test("hosted filters on data OSV records lack are INVALID_ARGUMENT naming each, never the unfiltered list", async () => {
    const cases: Array<[JsonObject, string, string]> = [
      [{ componentNames: ["openssl"] }, "component_names=openssl", "component_names"],
      [{ componentTypes: ["go-module"] }, "componentTypes=go-module", "component_types"],
      [{ componentLocations: ["/usr/lib"] }, "component_locations=%2Fusr%2Flib", "component_locations"],
      [{ artifactArchitectures: ["x86_64"] }, "artifact_architectures=x86_64", "artifact_architectures"],
      [{ legacyAdvisoryIds: ["CGA-1"] }, "legacy_advisory_ids=CGA-1", "legacy_advisory_ids"],
      [{ origin: "nvd" }, "origin=nvd", "origin"],
      [{ eventReviewStates: ["REVIEW_STATE_APPROVED"] }, "event_review_states=REVIEW_STATE_APPROVED", "event_review_states"],
      [{ eventAuthors: ["a"] }, "event_authors=a", "event_authors"],
      [{ excludeEventAuthors: ["a"] }, "exclude_event_authors=a", "exclude_event_authors"],
      [{ eventReviewers: ["a"] }, "event_reviewers=a", "event_reviewers"],
      [{ eventTypes: ["EVENT_TYPE_FILTER_FIXED"] }, "event_types=EVENT_TYPE_FILTER_FIXED", "event_types"],
      [{ latestEventType: "EVENT_TYPE_FILTER_FIXED" }, "latest_event_type=EVENT_TYPE_FILTER_FIXED", "latest_event_type"],
    ];
    for (const [request, rest, field] of cases) {
      const out = await list(request, rest);
      assert.equal(out.code, 3, `${field}: ${out.message}`);
      assert.equal(reasonOf(out), "INVALID_ARGUMENT");
      assert.deepEqual(fieldsOf(out), [field]);
      if (wireName === "rest") assert.equal(out.httpStatus, 400);
    }
  });

  test("GetAdvisory: the Advisory with aliases, scored severities and events; a withdrawn or missing one is NOT_FOUND", async () => {
    const uid = advisoryUid("RUSTSEC-2016-0001", "crates.io", "openssl");
    const out = await get(uid);
    assert.equal(out.code, 0, out.message);
    assert.deepEqual(out.body, {
      uid,
      advisoryId: "RUSTSEC-2016-0001",
      createTime: "2016-11-05T12:00:00Z",
      updateTime: "2023-06-13T13:10:24Z",
      artifactName: "openssl",
      aliases: ["CVE-2016-10931", "GHSA-34p9-f4q3-c4r7"],
      events: [
        { rangeType: "SEMVER", introduced: "0.0.0-0" },
        { rangeType: "SEMVER", fixed: "0.9.0" },
      ],
      severities: [{ type: "TYPE_CVSS_V3", score: "CVSS:3.0/AV:N/AC:H/PR:N/UI:N/S:U/C:H/I:H/A:H", baseScore: 8.1, osvType: "CVSS_V3" }],
      ecosystem: "crates.io",
      summary: "SSL/TLS MitM vulnerability due to insecure defaults",
    });
    const listed = await list({ advisoryIds: ["RUSTSEC-2016-0001"] });
    assert.deepEqual((listed.body?.advisories as JsonObject[])[0], out.body, "List and Get agree");

    const withdrawn = rustsec.find((r) => r.withdrawn)!;
    const gone = await get(advisoryUid(withdrawn.id, "crates.io", withdrawn.affected![0].package!.name));
    assert.equal(gone.code, 5);
    assert.deepEqual(ids(await list({ advisoryIds: [withdrawn.id] })), [], "withdrawn records are not listed");
    const missing = await get("0".repeat(40));
    assert.equal(missing.code, 5);
    assert.equal(detailOf(missing, "ResourceInfo")?.resourceType, "advisory");
    if (wireName === "rest") assert.equal(missing.httpStatus, 404);
    const bad = await get("RUSTSEC-2016-0001");
    assert.equal(bad.code, 3);
    assert.deepEqual(fieldsOf(bad), ["uid"]);
  });

  test("a version filter keeps the advisories affecting that version, by the OSV rules", async () => {
    for (const version of ["0.8.0", "0.10.50", "0.10.72", "9.9.9"]) {
      const out = await list({ artifactNames: ["openssl"], ecosystem: "crates.io", version, pageSize: 200 });
      assert.equal(out.code, 0, out.message);
      const expected = rustsec
        .filter((r) => !r.withdrawn && isVulnerable({ ecosystem: "crates.io", name: "openssl", version }, r))
        .map((r) => `${r.id} crates.io/openssl`)
        .sort();
      assert.deepEqual(ids(out).sort(), expected, version);
      assert.equal(out.body?.totalCount, String(expected.length));
    }
    const old = await list({ artifactNames: ["openssl"], ecosystem: "crates.io", version: "0.8.0" });
    assert.ok(ids(old).includes("RUSTSEC-2016-0001 crates.io/openssl"));
    const fixed = await list({ artifactNames: ["openssl"], ecosystem: "crates.io", version: "0.9.0" });
    assert.ok(!ids(fixed).includes("RUSTSEC-2016-0001 crates.io/openssl"), "fixed in 0.9.0");
    const pypi = await list({ artifactNames: ["openssl"], ecosystem: "PyPI", version: "1.0" });
    assert.deepEqual(ids(pypi), ["PYSEC-2099-1 PyPI/openssl"], "PEP 440: 1.0 < 1.0.post1");
    const debian = await list({ artifactNames: ["openssl"], ecosystem: "Debian", version: "3.0.11-1~deb12u2" });
    assert.deepEqual(ids(debian), [], "dpkg: fixed at that version");
  });

  test("every advisory is visited once by following page tokens", async () => {
    const seen = new Set<string>();
    let token = "";
    let pages = 0;
    do {
      const out = await list(token ? { pageSize: 200, pageToken: token } : { pageSize: 200 });
      assert.equal(out.code, 0, out.message);
      for (const a of out.body?.advisories as JsonObject[]) seen.add(a.uid as string);
      assert.equal(out.body?.totalCount, String(served + 2));
      token = (out.body?.nextPageToken as string | undefined) ?? "";
      pages++;
    } while (token);
    assert.equal(seen.size, served + 2);
    assert.equal(pages, Math.ceil((served + 2) / 200));
    const huge = await list({ pageSize: 1_000_000 });
    assert.equal((huge.body?.advisories as JsonObject[]).length, 200, "an absurd page size is cut to 200");
  });

  test("bad filters are INVALID_ARGUMENT naming each field; no token is UNAUTHENTICATED", async () => {
    const unknown = await list({ ecosystem: "cargo" });
    assert.equal(unknown.code, 3);
    assert.deepEqual(fieldsOf(unknown), ["ecosystem"]);
    const casing = await list({ ecosystem: "pypi" });
    assert.match(casing.message ?? "", /did you mean "PyPI"/);
    const unmatchable = await list({ artifactNames: ["x"], ecosystem: "Hex", version: "1.0.0" });
    assert.deepEqual(fieldsOf(unmatchable), ["ecosystem"], "an OSV ecosystem without a version ordering");
    const malformed = await list({ artifactNames: ["openssl"], ecosystem: "crates.io", version: "v1.0" });
    assert.deepEqual(fieldsOf(malformed), ["version"]);
    assert.match(malformed.message ?? "", /"v1\.0" is not a valid crates\.io version/);
    const alone = await list({ version: "1.0.0" });
    assert.deepEqual(fieldsOf(alone).sort(), ["artifact_names", "ecosystem"]);
    const negative = await list({ pageSize: -1 });
    assert.deepEqual(fieldsOf(negative), ["page_size"]);
    const many = await list({ advisoryIds: Array.from({ length: 201 }, (_, i) => `X-${i}`) });
    assert.deepEqual(fieldsOf(many), ["advisory_ids"]);
    const empty = await list({ artifactNames: [""] }, "artifactNames=");
    assert.deepEqual(fieldsOf(empty), ["artifact_names[0]"]);

    const anonymous = await list({}, undefined, "");
    assert.equal(anonymous.code, 16);
    assert.equal(reasonOf(anonymous), "UNAUTHENTICATED");
    assert.equal((await get(advisoryUid("RUSTSEC-2016-0001", "crates.io", "openssl"), "")).code, 16);
  });
});

servedWires.describeOverWires((wireName) => `SecurityAdvisoryService over ${wireName}, without a token`, ({ wire }) => {
  const call = (name: string, path: string, request: JsonObject, rest?: string, token = "") =>
    wire().call(methodOf(SecurityAdvisoryService, name), request, { method: "GET", path: `${path}?${rest ?? query(request as Record<string, string>)}` }, token);
  const documents = (request: JsonObject, rest?: string) => call("ListDocuments", "/advisory/v2/documents", request, rest);
  const metadata = (request: JsonObject, rest?: string, token?: string) => call("ListVulnerabilityMetadata", "/advisory/v2/metadata", request, rest, token);
  const advisoriesOf = (doc: JsonObject) => (doc.advisories as JsonObject[]).map((a) => `${a.id} ${a.packageNamespace}`);

  test("ListDocuments: one document per artifact with its advisories and their events", async () => {
    const out = await documents({ artifactNames: ["openssl"] });
    assert.equal(out.code, 0, out.message);
    const [doc, ...more] = out.body?.documents as JsonObject[];
    assert.equal(more.length, 0);
    assert.equal(doc.id, "openssl");
    const crates = rustsec.filter((r) => r.affected?.some((a) => a.package?.name === "openssl")).map((r) => `${r.id} crates.io`);
    assert.deepEqual(advisoriesOf(doc), [...crates.sort(), "DEBIAN-2099-1 Debian:12", "PYSEC-2099-1 PyPI"].sort());
    const first = (doc.advisories as JsonObject[]).find((a) => a.id === "RUSTSEC-2016-0001")!;
    assert.deepEqual(first, {
      id: "RUSTSEC-2016-0001",
      events: [
        { timestamp: "2023-06-13T13:10:24Z", rangeType: "SEMVER", introduced: "0.0.0-0" },
        { timestamp: "2023-06-13T13:10:24Z", rangeType: "SEMVER", fixed: "0.9.0" },
      ],
      aliases: ["CVE-2016-10931", "GHSA-34p9-f4q3-c4r7"],
      packageNamespace: "crates.io",
      summary: "SSL/TLS MitM vulnerability due to insecure defaults",
    });
    assert.equal(out.body?.totalCount, "1");
  });

  test("ListDocuments by CVE or id keeps the advisories found; a withdrawn record's stays, marked", async () => {
    const byCve = await documents({ cves: ["CVE-2016-10931"] });
    assert.deepEqual((byCve.body?.documents as JsonObject[]).map((d) => [d.id, advisoriesOf(d)]), [["openssl", ["RUSTSEC-2016-0001 crates.io"]]]);
    const withdrawn = rustsec.find((r) => r.withdrawn)!;
    const name = withdrawn.affected![0].package!.name;
    const out = await documents({ ids: [withdrawn.id], id: name }, `ids=${withdrawn.id}&id=${name}`);
    const [doc] = out.body?.documents as JsonObject[];
    assert.equal(doc.id, name);
    const [advisory] = doc.advisories as JsonObject[];
    assert.equal(advisory.id, withdrawn.id);
    assert.equal(Date.parse(advisory.withdrawn as string), Date.parse(withdrawn.withdrawn!));
    const both = await documents({ cves: ["CVE-2016-10931"], ids: [withdrawn.id] });
    assert.deepEqual(both.body?.documents ?? [], [], "filters combine with AND");
  });

  test("ListDocuments pages over artifacts", async () => {
    const artifacts = new Set(rustsec.flatMap((r) => r.affected?.map((a) => a.package!.name) ?? []));
    const first = await documents({ pageSize: 3, orderBy: "id desc" });
    assert.equal(first.body?.totalCount, String(artifacts.size), "openssl is shared by three ecosystems: one document");
    const ids = (first.body?.documents as JsonObject[]).map((d) => d.id as string);
    assert.deepEqual(ids, [...artifacts].sort().reverse().slice(0, 3));
    const next = await documents({ pageSize: 3, orderBy: "id desc", pageToken: first.body!.nextPageToken as string });
    assert.deepEqual((next.body?.documents as JsonObject[]).map((d) => d.id), [...artifacts].sort().reverse().slice(3, 6));
  });

  test("ListVulnerabilityMetadata: by id or alias, withdrawn records included, ordered by id", async () => {
    const out = await metadata({ ids: ["CVE-2016-10931"] });
    assert.equal(out.code, 0, out.message);
    assert.deepEqual(out.body?.vulnerabilityMetadata, [
      {
        id: "RUSTSEC-2016-0001",
        summary: "SSL/TLS MitM vulnerability due to insecure defaults",
        details: rustsec.find((r) => r.id === "RUSTSEC-2016-0001")!.details,
        references: [
          { type: "TYPE_PACKAGE", url: "https://crates.io/crates/openssl" },
          { type: "TYPE_ADVISORY", url: "https://rustsec.org/advisories/RUSTSEC-2016-0001.html" },
          { type: "TYPE_WEB", url: "https://github.com/sfackler/rust-openssl/releases/tag/v0.9.0" },
        ],
        severities: [{ type: "TYPE_CVSS_V3", score: "CVSS:3.0/AV:N/AC:H/PR:N/UI:N/S:U/C:H/I:H/A:H", baseScore: 8.1, osvType: "CVSS_V3" }],
        aliases: ["CVE-2016-10931", "GHSA-34p9-f4q3-c4r7"],
        published: "2016-11-05T12:00:00Z",
        modified: "2023-06-13T13:10:24Z",
      },
    ]);
    const withdrawn = rustsec.find((r) => r.withdrawn)!;
    const gone = await metadata({ id: withdrawn.id });
    assert.equal(Date.parse((gone.body?.vulnerabilityMetadata as JsonObject[])[0].withdrawn as string), Date.parse(withdrawn.withdrawn!));
    const page = await metadata({ pageSize: 3 });
    const sorted = [...rustsec.map((r) => r.id), "DEBIAN-2099-1", "PYSEC-2099-1"].sort();
    assert.deepEqual((page.body?.vulnerabilityMetadata as JsonObject[]).map((m) => m.id), sorted.slice(0, 3), "id asc by default");
    assert.equal(page.body?.totalCount, String(sorted.length));
    const newest = await metadata({ pageSize: 1, orderBy: "modified desc" });
    const latest = [...rustsec].sort((a, b) => Date.parse(b.modified) - Date.parse(a.modified))[0];
    assert.equal(Date.parse((newest.body?.vulnerabilityMetadata as JsonObject[])[0].modified as string), Date.parse(latest.modified));
  });

  test("bad list parameters are INVALID_ARGUMENT; a bad token is refused even here", async () => {
    assert.deepEqual(fieldsOf(await metadata({ pageSize: -5 })), ["page_size"]);
    assert.deepEqual(fieldsOf(await metadata({ orderBy: "summary" })), ["order_by"]);
    assert.deepEqual(fieldsOf(await documents({ cves: Array.from({ length: 201 }, (_, i) => `CVE-${i}`) })), ["cves"]);
    assert.deepEqual(fieldsOf(await documents({ artifactNames: ["x".repeat(2000)] })), ["artifact_names[0]"]);
    assert.equal((await metadata({}, undefined, "not-a-token")).code, 16);
  });
});
