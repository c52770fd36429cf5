import assert from "node:assert/strict";
import { join } from "node:path";
import { test } from "node:test";
import type { JsonObject } from "@bufbuild/protobuf";
import { ArtifactsService } from "../../gen/platform/libraries/v2/artifacts_service_pb.js";
import { bootstrapOrganization } from "../../src/server/bootstrap.js";
import { artifactUid } from "../../src/domains/libraries/artifact-rows.js";
import { importLibraries } from "../../src/domains/libraries/library-import.js";
import { importOsvFeed } from "../support/osv-import.js";
import { readLibraryFeed } from "../../src/engines/package-feeds/feed.js";
import { feedOf, osvRecord } from "../support/osv-records.js";
import { describeOverWires } from "../support/over-wires.js";
import type { TestServer } from "../support/test-server.js";
import { methodOf, reasonOf, violatedFields as fieldsOf, queryString as query } from "../support/wires.js";
import { inRepo } from "../support/repo.js";

/** ArtifactsService over every wire, on the shipped npm, PyPI and Maven fixtures and an advisory in each ecosystem. */

export const LIBRARY_FIXTURES = inRepo("test/fixtures/libraries");
/** test/fixtures/libraries/npm: 33 registry documents and one `npm view --json`. */
const NPM_COUNT = 34;
/** test/fixtures/libraries/pypi: 22 projects (core metadata of 41 wheels, a wheel, two PKG-INFO, an sdist). */
const PYPI_COUNT = 22;
/** test/fixtures/libraries/maven: 8 artifacts in a repository Maven wrote. */
const MAVEN_COUNT = 8;
const FIXTURE_FOLDERS = ["npm", "pypi", "maven"].map((f) => join(LIBRARY_FIXTURES, f));

let stranger: string;
/** A folder of the organization: it holds no artifacts. */
let folder: string;

/**
 * The fixtures and an advisory in each ecosystem in the organization; ms.json in another, whose
 * owner's token is `stranger`; an empty `folder`.
 */
async function prepare(server: TestServer): Promise<void> {
  await importLibraries(server.store.db, server.org.uid, readLibraryFeed(FIXTURE_FOLDERS));
  await importOsvFeed(
    server.store.db,
    feedOf(
      osvRecord("GHSA-TEST-MINIMIST", {
        aliases: ["CVE-2099-0101"],
        affected: [{ package: { ecosystem: "npm", name: "minimist" }, ranges: [{ type: "SEMVER", events: [{ introduced: "0" }, { fixed: "1.2.6" }] }] }],
      }),
      osvRecord("GHSA-TEST-NUMPY", { affected: [{ package: { ecosystem: "PyPI", name: "numpy" }, ranges: [{ type: "ECOSYSTEM", events: [{ introduced: "0" }, { fixed: "2.2.0" }] }] }] }),
      osvRecord("GHSA-TEST-LANG3", {
        affected: [{ package: { ecosystem: "Maven", name: "org.apache.commons:commons-lang3" }, ranges: [{ type: "ECOSYSTEM", events: [{ introduced: "3.0" }, { fixed: "3.18.0" }] }] }],
      }),
    ),
  );
  const other = await bootstrapOrganization(server.store, "other-org", Date.now());
  await importLibraries(server.store.db, other.organization.uid, readLibraryFeed([join(LIBRARY_FIXTURES, "npm", "ms.json")]));
  stranger = (await server.server.tokens.issue({ subject: other.identity.uid, audience: "http://api.test" })).token;
  const made = await fetch(`http://127.0.0.1:${server.apiPort}/iam/v2/groups/${server.org.uid}`, {
    method: "POST",
    headers: { authorization: `Bearer ${server.ownerToken}`, "content-type": "application/json" },
    body: JSON.stringify({ name: "no libraries here" }),
  });
  folder = ((await made.json()) as { uid: string }).uid;
}

const { server } = describeOverWires("ArtifactsService", { prepare }, ({ server, wire }) => {
  const list = (request: JsonObject, rest: Record<string, string | number | string[]> = request as never, token = server().ownerToken) =>
    wire().call(methodOf(ArtifactsService, "ListArtifacts"), request, { method: "GET", path: `/libraries/v2/artifacts?${query(rest)}` }, token);
  const versions = (artifactId: string, request: JsonObject = {}, token = server().ownerToken) =>
    wire().call(methodOf(ArtifactsService, "ListArtifactVersions"), { artifactId, ...request }, { method: "GET", path: `/libraries/v2/artifacts/${artifactId}/versions?${query(request as never)}` }, token);
  const count = (ecosystems: string[], token = server().ownerToken) =>
    wire().call(methodOf(ArtifactsService, "GetArtifactCount"), { ecosystems }, { method: "GET", path: `/libraries/v2/artifacts/count?${query({ ecosystems })}` }, token);

  test("ListArtifacts needs an ecosystem, lists the org's npm packages, pages and searches by name", async () => {
    const none = await list({});
    assert.equal(none.code, 3);
    assert.equal(reasonOf(none), "INVALID_ARGUMENT");
    assert.deepEqual(fieldsOf(none), ["ecosystems"]);

    const all = await list({ ecosystems: ["ECOSYSTEM_JAVASCRIPT"], orderBy: "name", pageSize: 10 });
    assert.equal(all.code, 0, all.message);
    assert.equal(all.body!.totalCount, String(NPM_COUNT));
    const names = (all.body!.artifacts as JsonObject[]).map((a) => a.name);
    assert.deepEqual(names.slice(0, 3), ["balanced-match", "brace-expansion", "concat-map"]);
    const next = await list({ ecosystems: ["ECOSYSTEM_JAVASCRIPT"], orderBy: "name", pageSize: 10, pageToken: all.body!.nextPageToken as string });
    assert.equal((next.body!.artifacts as JsonObject[])[0].name, "etag");

    const found = await list({ ecosystems: ["ECOSYSTEM_JAVASCRIPT"], query: "MiniM" }, { ecosystems: "JAVASCRIPT", query: "MiniM" });
    assert.equal(found.code, 0, found.message);
    assert.deepEqual(found.body!.artifacts, [
      {
        uid: artifactUid(server().org.uid, "npm", "minimist"),
        name: "minimist",
        description: "parse argument options",
        ecosystem: "ECOSYSTEM_JAVASCRIPT",
        latestVersion: "1.2.8",
        versionCount: 31,
        createTime: (found.body!.artifacts as JsonObject[])[0].createTime,
        updateTime: (found.body!.artifacts as JsonObject[])[0].updateTime,
      },
    ]);
    const literal = await list({ ecosystems: ["ECOSYSTEM_JAVASCRIPT"], query: "is-n" }, { ecosystems: "JAVASCRIPT", query: "is-n" });
    assert.deepEqual((literal.body!.artifacts as JsonObject[]).map((a) => a.name), ["is-number"]);
    const wildcard = await list({ ecosystems: ["ECOSYSTEM_JAVASCRIPT"], query: "%" }, { ecosystems: "JAVASCRIPT", query: "%" });
    assert.equal(wildcard.body!.totalCount, "0", "% and _ are matched literally");
    const both = await list({ ecosystems: ["ECOSYSTEM_PYTHON", "ECOSYSTEM_JAVA"], query: "is-n" }, { ecosystems: ["PYTHON", "JAVA"], query: "is-n" });
    assert.equal(both.body!.totalCount, "0", "only the ecosystems asked for");
  });

  test("ListArtifacts and ListArtifactVersions apply the hierarchy filters (spec 4.1): a folder holds no artifacts", async () => {
    const ecosystems = ["ECOSYSTEM_JAVASCRIPT"];
    const filtered = (uidp: Record<string, string>) =>
      list({ ecosystems, uidp }, { ecosystems, ...Object.fromEntries(Object.entries(uidp).map(([k, v]) => [`uidp.${k.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`)}`, v])) });
    const inOrg = await filtered({ descendantsOf: server().org.uid });
    assert.equal(inOrg.code, 0, inOrg.message);
    assert.equal(inOrg.body!.totalCount, String(NPM_COUNT));
    const children = await filtered({ childrenOf: server().org.uid });
    assert.equal(children.body!.totalCount, String(NPM_COUNT));
    for (const uidp of [{ descendantsOf: folder }, { childrenOf: folder }] as Array<Record<string, string>>) {
      const none = await filtered(uidp);
      assert.equal(none.code, 0, none.message);
      assert.equal(none.body!.totalCount, "0", JSON.stringify(uidp));
      assert.deepEqual(none.body!.artifacts ?? [], []);
    }
    const minimist = artifactUid(server().org.uid, "npm", "minimist");
    const one = await list({ ecosystems, uidp: { ids: [minimist] } }, { ecosystems, "uidp.ids": [minimist] });
    assert.deepEqual((one.body!.artifacts as JsonObject[]).map((a) => a.name), ["minimist"]);

    const of = (uidp: Record<string, string>) => {
      const rest = Object.fromEntries(Object.entries(uidp).map(([k, v]) => [`uidp.${k.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`)}`, v]));
      return wire().call(
        methodOf(ArtifactsService, "ListArtifactVersions"),
        { artifactId: minimist, uidp },
        { method: "GET", path: `/libraries/v2/artifacts/${minimist}/versions?${query(rest)}` },
        server().ownerToken,
      );
    };
    assert.equal((await of({ childrenOf: minimist })).body!.totalCount, "31");
    assert.equal((await of({ descendantsOf: server().org.uid })).body!.totalCount, "31");
    assert.equal((await of({ descendantsOf: folder })).body!.totalCount, "0");
    assert.equal((await of({ childrenOf: server().org.uid })).body!.totalCount, "0", "versions are not children of the organization");
  });

  test("ListArtifactVersions orders by the ecosystem's ordering, newest first, with the advisories of each version", async () => {
    const uid = artifactUid(server().org.uid, "npm", "minimist");
    const page = await versions(uid, { pageSize: 5 });
    assert.equal(page.code, 0, page.message);
    assert.equal(page.body!.totalCount, "31");
    const rows = page.body!.artifactVersions as JsonObject[];
    assert.deepEqual(
      rows.map((v) => v.version),
      ["1.2.8", "1.2.7", "1.2.6", "1.2.5", "1.2.4"],
    );
    assert.deepEqual(
      rows.map((v) => ((v.advisories as JsonObject[] | undefined) ?? []).map((a) => a.advisoryId)),
      [[], [], [], ["GHSA-TEST-MINIMIST"], ["GHSA-TEST-MINIMIST"]],
    );
    assert.equal(rows[0].name, "minimist");
    assert.ok(typeof rows[0].publishTime === "string");
    const oldest = await versions(uid, { orderBy: "version", pageSize: 2 });
    assert.deepEqual(
      (oldest.body!.artifactVersions as JsonObject[]).map((v) => v.version),
      ["0.0.0", "0.0.1"],
    );
    const missing = await versions(`${server().org.uid}/0000000000000000`);
    assert.equal(missing.code, 5);
  });

  test("Python: projects from wheels' and sdists' core metadata, PEP 440 order, a PEP 503 name search, advisories per version", async () => {
    const all = await list({ ecosystems: ["ECOSYSTEM_PYTHON"], orderBy: "name", pageSize: 3 }, { ecosystems: "PYTHON", orderBy: "name", pageSize: 3 });
    assert.equal(all.code, 0, all.message);
    assert.equal(all.body!.totalCount, String(PYPI_COUNT));
    assert.deepEqual((all.body!.artifacts as JsonObject[]).map((a) => a.name), ["Deprecated", "alabaster", "black"], "names as their metadata spell them, in byte order");
    const found = await list({ ecosystems: ["ECOSYSTEM_PYTHON"], query: "DEPREC" }, { ecosystems: "PYTHON", query: "DEPREC" });
    const [deprecated] = found.body!.artifacts as JsonObject[];
    assert.deepEqual([deprecated.uid, deprecated.name, deprecated.ecosystem, deprecated.latestVersion, deprecated.versionCount], [artifactUid(server().org.uid, "PyPI", "deprecated"), "Deprecated", "ECOSYSTEM_PYTHON", "1.3.1", 2]);

    const numpy = await versions(artifactUid(server().org.uid, "PyPI", "numpy"));
    assert.equal(numpy.code, 0, numpy.message);
    const rows = numpy.body!.artifactVersions as JsonObject[];
    assert.deepEqual(rows.map((v) => v.version), ["2.4.6", "2.3.5", "2.2.6", "2.0.2", "1.26.4"]);
    assert.deepEqual(rows.map((v) => ((v.advisories as JsonObject[] | undefined) ?? []).map((a) => a.advisoryId)), [[], [], [], ["GHSA-TEST-NUMPY"], ["GHSA-TEST-NUMPY"]]);
    assert.equal(rows[0].description, "Fundamental package for array computing in Python");

    const wheel = await versions(artifactUid(server().org.uid, "PyPI", "wheel"), { pageSize: 2, orderBy: "version" });
    const oldest = wheel.body!.artifactVersions as JsonObject[];
    assert.deepEqual(oldest.map((v) => [v.version, v.description]), [["0.38.4", "A built-package format for Python"], ["0.46.3", "Command line tool for manipulating wheel files"]], "the sdist's PKG-INFO beside the wheels' METADATA");
    assert.ok(Number(oldest[0].sizeBytes) > 0, "an sdist's size is its file's");
    const six = await versions(artifactUid(server().org.uid, "PyPI", "six"));
    assert.deepEqual((six.body!.artifactVersions as JsonObject[]).map((v) => [v.version, v.sizeBytes ?? "0"]), [["1.17.0", "11050"], ["1.16.0", "0"]]);
  });

  test("Java: artifacts from a Maven repository, Maven's version order, latest skipping milestones, advisories per version", async () => {
    const all = await list({ ecosystems: ["ECOSYSTEM_JAVA"], orderBy: "name" }, { ecosystems: "JAVA", orderBy: "name" });
    assert.equal(all.code, 0, all.message);
    assert.equal(all.body!.totalCount, String(MAVEN_COUNT));
    const artifacts = all.body!.artifacts as JsonObject[];
    assert.deepEqual(artifacts.map((a) => a.name), [
      "com.fasterxml.jackson.core:jackson-annotations",
      "com.google.guava:guava",
      "org.apache.commons:commons-lang3",
      "org.apache.maven.doxia:doxia",
      "org.codehaus.plexus:plexus-classworlds",
      "org.junit.jupiter:junit-jupiter-api",
      "org.ow2.asm:asm",
      "org.slf4j:slf4j-api",
    ]);
    const guava = artifacts[1];
    assert.deepEqual([guava.latestVersion, guava.versionCount, guava.ecosystem], ["33.7.2-jre", 21, "ECOSYSTEM_JAVA"]);
    assert.match(guava.description as string, /^Guava is a suite of core and expanded libraries/);
    assert.equal(artifacts[3].latestVersion, "2.1.0");

    const searched = await list({ ecosystems: ["ECOSYSTEM_JAVA"], query: "Jackson" }, { ecosystems: "JAVA", query: "Jackson" });
    assert.deepEqual((searched.body!.artifacts as JsonObject[]).map((a) => a.name), ["com.fasterxml.jackson.core:jackson-annotations"]);

    const asm = await versions(artifactUid(server().org.uid, "Maven", "org.ow2.asm:asm"), { pageSize: 4 });
    assert.deepEqual((asm.body!.artifactVersions as JsonObject[]).map((v) => v.version), ["9.10.1", "9.10", "9.9.1", "9.9"]);
    const doxia = await versions(artifactUid(server().org.uid, "Maven", "org.apache.maven.doxia:doxia"), { orderBy: "version", pageSize: 3 });
    assert.deepEqual((doxia.body!.artifactVersions as JsonObject[]).map((v) => v.version), ["1.0-alpha-7", "1.0-alpha-10", "1.0"]);
    const next = await versions(artifactUid(server().org.uid, "Maven", "org.apache.maven.doxia:doxia"), { orderBy: "version", pageSize: 3, pageToken: doxia.body!.nextPageToken as string });
    assert.deepEqual((next.body!.artifactVersions as JsonObject[]).map((v) => v.version), ["1.9.1", "1.11.1", "1.12.0"]);

    const lang3 = await versions(artifactUid(server().org.uid, "Maven", "org.apache.commons:commons-lang3"), { pageSize: 5 });
    const rows = lang3.body!.artifactVersions as JsonObject[];
    assert.deepEqual(rows.map((v) => v.version), ["3.20.0", "3.19.0", "3.18.0", "3.17.0", "3.16.0"]);
    assert.deepEqual(rows.map((v) => ((v.advisories as JsonObject[] | undefined) ?? []).map((a) => a.advisoryId)), [[], [], [], ["GHSA-TEST-LANG3"], ["GHSA-TEST-LANG3"]]);
    assert.equal(rows[0].name, "org.apache.commons:commons-lang3");
  });

  test("GetArtifactCount counts per ecosystem; another organization sees only its own index", async () => {
    const mine = await count(["ECOSYSTEM_JAVASCRIPT", "ECOSYSTEM_JAVA"]);
    assert.equal(mine.code, 0, mine.message);
    const counted = (body: JsonObject | undefined) => (body!.counts as JsonObject[]).map((c) => [c.ecosystem, Number(c.totalCount ?? 0)]);
    assert.deepEqual(counted(mine.body), [["ECOSYSTEM_JAVASCRIPT", NPM_COUNT], ["ECOSYSTEM_JAVA", MAVEN_COUNT]]);
    const three = await count(["ECOSYSTEM_PYTHON", "ECOSYSTEM_JAVA", "ECOSYSTEM_JAVASCRIPT"]);
    assert.deepEqual(counted(three.body), [["ECOSYSTEM_PYTHON", PYPI_COUNT], ["ECOSYSTEM_JAVA", MAVEN_COUNT], ["ECOSYSTEM_JAVASCRIPT", NPM_COUNT]]);
    const theirs = await count(["ECOSYSTEM_JAVASCRIPT"], stranger);
    assert.deepEqual(counted(theirs.body), [["ECOSYSTEM_JAVASCRIPT", 1]]);
    const listed = await list({ ecosystems: ["ECOSYSTEM_JAVASCRIPT"] }, { ecosystems: "ECOSYSTEM_JAVASCRIPT" }, stranger);
    assert.deepEqual((listed.body!.artifacts as JsonObject[]).map((a) => a.name), ["ms"]);
    const denied = await versions(artifactUid(server().org.uid, "npm", "minimist"), {}, stranger);
    assert.equal(denied.code, 7);
    const unknown = await count(["ECOSYSTEM_UNSPECIFIED"]);
    assert.equal(unknown.code, 3);
  });
});

test("importing the same metadata again changes nothing", async () => {
  const counts = await importLibraries(server().store.db, server().org.uid, readLibraryFeed(FIXTURE_FOLDERS));
  const all = NPM_COUNT + PYPI_COUNT + MAVEN_COUNT;
  assert.deepEqual(counts, { read: all, added: 0, updated: 0, unchanged: all, rejected: 0 });
});
