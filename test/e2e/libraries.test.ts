import assert from "node:assert/strict";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import type { JsonObject } from "@bufbuild/protobuf";
import { ArtifactsService } from "../../gen/platform/libraries/v2/artifacts_service_pb.js";
import { bootstrapOrganization } from "../../src/bootstrap.js";
import { artifactUid } from "../../src/domains/libraries/artifact-rows.js";
import { importLibraries } from "../../src/domains/libraries/library-import.js";
import { importOsvFeed } from "../../src/domains/vulnerabilities/osv-import.js";
import { readLibraryFeed } from "../../src/libraries/feed.js";
import { feedOf, osvRecord } from "../support/osv-records.js";
import { startTestServer, type TestServer } from "../support/test-server.js";
import { allWires, detailOf, methodOf, reasonOf, type Wire } from "../support/wires.js";

/** ArtifactsService over every wire, on the shipped npm fixtures and an npm advisory. */

export const LIBRARY_FIXTURES = new URL("../fixtures/libraries", import.meta.url).pathname;
/** test/fixtures/libraries/npm: 33 registry documents and one `npm view --json`. */
const NPM_COUNT = 34;

let server: TestServer;
let wires: Wire[];
let stranger: string;

before(async () => {
  server = await startTestServer();
  wires = allWires(server.apiPort);
  await importLibraries(server.store.db, server.org.uid, readLibraryFeed([join(LIBRARY_FIXTURES, "npm")]));
  await importOsvFeed(
    server.store.db,
    feedOf(
      osvRecord("GHSA-TEST-MINIMIST", {
        aliases: ["CVE-2099-0101"],
        affected: [{ package: { ecosystem: "npm", name: "minimist" }, ranges: [{ type: "SEMVER", events: [{ introduced: "0" }, { fixed: "1.2.6" }] }] }],
      }),
    ),
  );
  const other = await bootstrapOrganization(server.store, "other-org", Date.now());
  await importLibraries(server.store.db, other.organization.uid, readLibraryFeed([join(LIBRARY_FIXTURES, "npm", "ms.json")]));
  stranger = (await server.server.tokens.issue({ subject: other.identity.uid, audience: "http://api.test" })).token;
});

after(async () => {
  for (const wire of wires) wire.close();
  await server.close();
});

const query = (params: Record<string, string | number | string[]>) => {
  const search = new URLSearchParams();
  for (const [key, value] of Object.entries(params)) for (const v of Array.isArray(value) ? value : [value]) search.append(key, String(v));
  return search.toString();
};
const fieldsOf = (out: { details: JsonObject[] }) => ((detailOf(out as never, "BadRequest")?.fieldViolations as JsonObject[] | undefined) ?? []).map((v) => v.field);

for (const wireName of ["grpc", "connect", "grpc-web", "rest"] as const) {
  describe(`ArtifactsService over ${wireName}`, () => {
    const wire = () => wires.find((w) => w.name === wireName)!;
    const list = (request: JsonObject, rest: Record<string, string | number | string[]> = request as never, token = server.ownerToken) =>
      wire().call(methodOf(ArtifactsService, "ListArtifacts"), request, { method: "GET", path: `/libraries/v2/artifacts?${query(rest)}` }, token);
    const versions = (artifactId: string, request: JsonObject = {}, token = server.ownerToken) =>
      wire().call(methodOf(ArtifactsService, "ListArtifactVersions"), { artifactId, ...request }, { method: "GET", path: `/libraries/v2/artifacts/${artifactId}/versions?${query(request as never)}` }, token);
    const count = (ecosystems: string[], token = server.ownerToken) =>
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
          uid: artifactUid(server.org.uid, "npm", "minimist"),
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
      const python = await list({ ecosystems: ["ECOSYSTEM_PYTHON"] }, { ecosystems: "PYTHON" });
      assert.equal(python.body!.totalCount, "0");
    });

    test("ListArtifactVersions orders by the ecosystem's ordering, newest first, with the advisories of each version", async () => {
      const uid = artifactUid(server.org.uid, "npm", "minimist");
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
      const missing = await versions(`${server.org.uid}/0000000000000000`);
      assert.equal(missing.code, 5);
    });

    test("GetArtifactCount counts per ecosystem; another organization sees only its own index", async () => {
      const mine = await count(["ECOSYSTEM_JAVASCRIPT", "ECOSYSTEM_JAVA"]);
      assert.equal(mine.code, 0, mine.message);
      const counted = (body: JsonObject | undefined) => (body!.counts as JsonObject[]).map((c) => [c.ecosystem, Number(c.totalCount ?? 0)]);
      assert.deepEqual(counted(mine.body), [["ECOSYSTEM_JAVASCRIPT", NPM_COUNT], ["ECOSYSTEM_JAVA", 0]]);
      const theirs = await count(["ECOSYSTEM_JAVASCRIPT"], stranger);
      assert.deepEqual(counted(theirs.body), [["ECOSYSTEM_JAVASCRIPT", 1]]);
      const listed = await list({ ecosystems: ["ECOSYSTEM_JAVASCRIPT"] }, { ecosystems: "ECOSYSTEM_JAVASCRIPT" }, stranger);
      assert.deepEqual((listed.body!.artifacts as JsonObject[]).map((a) => a.name), ["ms"]);
      const denied = await versions(artifactUid(server.org.uid, "npm", "minimist"), {}, stranger);
      assert.equal(denied.code, 7);
      const unknown = await count(["ECOSYSTEM_UNSPECIFIED"]);
      assert.equal(unknown.code, 3);
    });
  });
}

test("importing the same documents again changes nothing", async () => {
  const counts = await importLibraries(server.store.db, server.org.uid, readLibraryFeed([join(LIBRARY_FIXTURES, "npm")]));
  assert.deepEqual(counts, { read: NPM_COUNT, added: 0, updated: 0, unchanged: NPM_COUNT, rejected: 0 });
});
