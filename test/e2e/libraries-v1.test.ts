// Libraries v1 (`/libraries/v1/artifacts`) on every wire: the v2 library index in v1 shapes, paged
// and counted as hosted v1 is, every version of an artifact at once, a missing artifact empty.
import assert from "node:assert/strict";
import { join } from "node:path";
import { test } from "node:test";
import type { JsonObject } from "@bufbuild/protobuf";
import { Artifacts } from "../../gen/platform/libraries/v1/artifacts_pb.js";
import { ArtifactsService } from "../../gen/platform/libraries/v2/artifacts_service_pb.js";
import { newChildUid } from "../../src/aip/uidp.js";
import { bootstrapOrganization } from "../../src/server/bootstrap.js";
import { artifactUid } from "../../src/domains/libraries/artifact-rows.js";
import { importLibraries } from "../../src/domains/libraries/library-import.js";
import { readLibraryFeed } from "../../src/engines/package-feeds/feed.js";
import { describeOverWires } from "../support/over-wires.js";
import type { TestServer } from "../support/test-server.js";
import { methodOf, type Outcome, violatedFields as fields, queryString as query } from "../support/wires.js";
import { inRepo } from "../support/repo.js";

const FIXTURES = inRepo("test/fixtures/libraries");
/** test/fixtures/libraries/npm and pypi (as test/e2e/libraries.test.ts counts them). */
const NPM_COUNT = 34;
const PYPI_COUNT = 22;

let stranger: string;

/** The npm and PyPI fixtures in the organization; ms.json in another, whose owner's token is `stranger`. */
async function importFixtures(server: TestServer): Promise<void> {
  await importLibraries(server.store.db, server.org.uid, readLibraryFeed(["npm", "pypi"].map((f) => join(FIXTURES, f))));
  const other = await bootstrapOrganization(server.store, "other-org", Date.now());
  await importLibraries(server.store.db, other.organization.uid, readLibraryFeed([join(FIXTURES, "npm", "ms.json")]));
  stranger = (await server.server.tokens.issue({ subject: other.identity.uid, audience: "http://api.test" })).token;
}

const items = (out: Outcome) => (out.body?.items as JsonObject[] | undefined) ?? [];

describeOverWires("Artifacts v1", { prepare: importFixtures }, ({ server, wire, wireName }) => {
  const list = (request: JsonObject, params: Record<string, string | number | string[]>, token = server().ownerToken) =>
    wire().call(methodOf(Artifacts, "List"), request, { method: "GET", path: `/libraries/v1/artifacts?${query(params)}` }, token);
  const versions = (id: string) => wire().call(methodOf(Artifacts, "ListVersions"), { id }, { method: "GET", path: `/libraries/v1/artifacts/${id}/versions` }, server().ownerToken);

  test("List: the v2 artifacts in v1 shapes, a page at a time, with total_artifacts", async () => {
    const first = await list({ ecosystems: ["JAVASCRIPT"], pageSize: 5 }, { ecosystems: "JAVASCRIPT", page_size: 5 });
    assert.equal(first.code, 0, first.message);
    assert.equal(items(first).length, 5);
    assert.equal(first.body!.totalArtifacts, NPM_COUNT);
    assert.ok(items(first).every((a) => a.ecosystem === "JAVASCRIPT" && typeof a.id === "string" && a.createdAt));
    const v2 = await wire().call(
      methodOf(ArtifactsService, "ListArtifacts"),
      { ecosystems: ["ECOSYSTEM_JAVASCRIPT"], pageSize: 5 },
      { method: "GET", path: "/libraries/v2/artifacts?ecosystems=ECOSYSTEM_JAVASCRIPT&page_size=5" },
      server().ownerToken,
    );
    assert.deepEqual(items(first).map((a) => a.id), (v2.body!.artifacts as JsonObject[]).map((a) => a.uid));
    const token = first.body!.nextPageToken as string;
    const second = await list({ ecosystems: ["JAVASCRIPT"], pageSize: 5, pageToken: token }, { ecosystems: "JAVASCRIPT", page_size: 5, page_token: token });
    assert.equal(second.code, 0, second.message);
    assert.equal(items(second).length, 5);
    assert.equal(items(second).filter((a) => items(first).some((b) => b.id === a.id)).length, 0);
    const skipped = await list({ ecosystems: ["JAVASCRIPT"], pageSize: 5, skip: 30 }, { ecosystems: "JAVASCRIPT", page_size: 5, skip: 30 });
    assert.equal(items(skipped).length, NPM_COUNT - 30);
    assert.equal(skipped.body!.skipped, 30);
  });

  test("List needs an ecosystem and sees only the caller's organization", async () => {
    const none = await list({}, {});
    assert.equal(none.code, 3);
    assert.deepEqual(fields(none), ["ecosystems"]);
    const theirs = await list({ ecosystems: ["JAVASCRIPT"] }, { ecosystems: "JAVASCRIPT" }, stranger);
    assert.equal(theirs.code, 0, theirs.message);
    assert.deepEqual(items(theirs).map((a) => a.name), ["ms"]);
  });

  test("ListVersions answers every version, as v2 pages them; a missing artifact has none (200)", async () => {
    const id = artifactUid(server().org.uid, "npm", "minimist");
    const all = await versions(id);
    assert.equal(all.code, 0, all.message);
    const v2: string[] = [];
    let pageToken = "";
    do {
      const page = await wire().call(
        methodOf(ArtifactsService, "ListArtifactVersions"),
        { artifactId: id, pageSize: 7, pageToken },
        { method: "GET", path: `/libraries/v2/artifacts/${id}/versions?${query({ page_size: 7, page_token: pageToken })}` },
        server().ownerToken,
      );
      assert.equal(page.code, 0, page.message);
      v2.push(...((page.body!.artifactVersions as JsonObject[] | undefined) ?? []).map((v) => v.uid as string));
      pageToken = (page.body!.nextPageToken as string | undefined) ?? "";
    } while (pageToken !== "");
    assert.ok(v2.length > 7, "more than one v2 page");
    assert.deepEqual(items(all).map((v) => v.id), v2);
    assert.ok(items(all).every((v) => v.name === "minimist" && typeof v.version === "string" && v.advisories === undefined));
    const missing = newChildUid(server().org.uid);
    const none = await versions(missing);
    assert.equal(none.code, 0, none.message);
    assert.deepEqual(items(none), []);
    if (wireName === "rest") assert.equal(none.httpStatus, 200);
  });

  test("GetArtifactCount counts each ecosystem asked for", async () => {
    const out = await wire().call(
      methodOf(Artifacts, "GetArtifactCount"),
      { ecosystems: ["JAVASCRIPT", "PYTHON"] },
      { method: "GET", path: "/libraries/v1/artifacts/count?ecosystems=JAVASCRIPT&ecosystems=PYTHON" },
      server().ownerToken,
    );
    assert.equal(out.code, 0, out.message);
    assert.deepEqual(out.body!.counts, [
      { ecosystem: "JAVASCRIPT", totalArtifacts: NPM_COUNT },
      { ecosystem: "PYTHON", totalArtifacts: PYPI_COUNT },
    ]);
  });
});
