// Vulnerabilities v1 (`/vulnerabilities/v1/advisories`) on every wire: the v2 advisories in v1
// shapes, v1's filters and orders mapped onto v2's, paging and total as hosted v1 has them.
import assert from "node:assert/strict";
import { test } from "node:test";
import type { JsonObject } from "@bufbuild/protobuf";
import { Advisories } from "../../gen/platform/vulnerabilities/v1/advisory_pb.js";
import { AdvisoriesService } from "../../gen/platform/vulnerabilities/v2/advisories_service_pb.js";
import type { OsvAffected } from "../../src/engines/advisories/osv/record.js";
import { importOsvFeed } from "../support/osv-import.js";
import { feedOf, osvRecord } from "../support/osv-records.js";
import { describeOverWires } from "../support/over-wires.js";
import type { TestServer } from "../support/test-server.js";
import { methodOf, type Outcome, violatedFields as fields, queryString as query } from "../support/wires.js";

const items = (out: Outcome) => (out.body?.items as JsonObject[] | undefined) ?? [];

/** Imports the advisories the tests read: two of PyPI, one of Debian. */
async function importAdvisories(server: TestServer): Promise<void> {
  const affected = (ecosystem: string, name: string): OsvAffected[] => [{ package: { ecosystem, name }, ranges: [{ type: "ECOSYSTEM", events: [{ introduced: "0" }, { fixed: "9" }] }] }];
  await importOsvFeed(
    server.store.db,
    feedOf(
      osvRecord("PYSEC-2099-1", { aliases: ["CVE-2099-0001"], affected: affected("PyPI", "openssl") }),
      osvRecord("PYSEC-2099-2", { aliases: ["CVE-2099-0002"], affected: affected("PyPI", "requests") }),
      osvRecord("DEBIAN-2099-1", { affected: affected("Debian:12", "openssl") }),
    ),
  );
}

describeOverWires("Advisories v1", { prepare: importAdvisories }, ({ server, wire, wireName }) => {
  /** List with the proto-JSON `request`, over REST the snake_case `params`. */
  const list = (request: JsonObject, params: Record<string, string | number | string[]>) =>
    wire().call(methodOf(Advisories, "List"), request, { method: "GET", path: `/vulnerabilities/v1/advisories?${query(params)}` }, server().ownerToken);

  test("List: the v2 advisories in v1 shapes, filtered by artifact_name, advisory_ids and aliases", async () => {
    const all = await list({ orderBy: "ID_ASC" }, { order_by: "ID_ASC" });
    assert.equal(all.code, 0, all.message);
    assert.deepEqual(items(all).map((a) => a.advisoryId), ["DEBIAN-2099-1", "PYSEC-2099-1", "PYSEC-2099-2"]);
    assert.equal(all.body!.totalCount, "3");
    const first = items(all)[1];
    assert.equal(first.artifactType, "PyPI");
    assert.equal(first.artifactName, "openssl");
    assert.deepEqual(first.aliases, ["CVE-2099-0001"]);
    assert.ok(first.createdAt && first.updatedAt);
    const v2 = await wire().call(methodOf(AdvisoriesService, "GetAdvisory"), { uid: first.id as string }, { method: "GET", path: `/vulnerabilities/v2/advisories/${first.id}` }, server().ownerToken);
    assert.equal(v2.body!.advisoryId, "PYSEC-2099-1");

    const openssl = await list({ artifactName: ["openssl"] }, { artifact_name: ["openssl"] });
    assert.deepEqual(items(openssl).map((a) => a.advisoryId).sort(), ["DEBIAN-2099-1", "PYSEC-2099-1"]);
    const byAlias = await list({ aliases: ["CVE-2099-0002"] }, { aliases: ["CVE-2099-0002"] });
    assert.deepEqual(items(byAlias).map((a) => a.advisoryId), ["PYSEC-2099-2"]);
    const byId = await list({ id: first.id as string }, { id: first.id as string });
    assert.deepEqual(items(byId).map((a) => a.id), [first.id]);
    const ownId = await list({ aliases: ["PYSEC-2099-2"] }, { aliases: ["PYSEC-2099-2"] });
    assert.deepEqual(items(ownId), [], "aliases finds records by alias only, as hosted");
    const byType = await list({ artifactType: ["Debian"] }, { artifact_type: ["Debian"] });
    assert.deepEqual(items(byType).map((a) => a.advisoryId), ["DEBIAN-2099-1"]);
  });

  test("hosted v1 filters on data OSV records lack are INVALID_ARGUMENT naming the v1 field", async () => {
    for (const [request, params, field] of [
      [{ componentName: ["x"] }, { component_name: ["x"] }, "component_name"],
      [{ eventAuthor: ["x"] }, { event_author: ["x"] }, "event_author"],
      [{ origin: "x" }, { origin: "x" }, "origin"],
    ] as Array<[JsonObject, Record<string, string | string[]>, string]>) {
      const out = await list(request, params);
      assert.equal(out.code, 3, field);
      assert.deepEqual(fields(out), [field]);
    }
  });

  test("List pages with page_size and page_token, in the asked order", async () => {
    const one = await list({ pageSize: 2, orderBy: "ID_DESC" }, { page_size: 2, order_by: "ID_DESC" });
    assert.deepEqual(items(one).map((a) => a.advisoryId), ["PYSEC-2099-2", "PYSEC-2099-1"]);
    const token = one.body!.nextPageToken as string;
    assert.ok(token);
    const two = await list({ pageSize: 2, orderBy: "ID_DESC", pageToken: token }, { page_size: 2, order_by: "ID_DESC", page_token: token });
    assert.deepEqual(items(two).map((a) => a.advisoryId), ["DEBIAN-2099-1"]);
    assert.equal(two.body!.nextPageToken ?? "", "");
  });

  test("a missing id is an empty list with 200; a bad id or an order on data not kept is INVALID_ARGUMENT", async () => {
    const missing = await list({ id: "0".repeat(40) }, { id: "0".repeat(40) });
    assert.equal(missing.code, 0, missing.message);
    assert.deepEqual(items(missing), []);
    if (wireName === "rest") assert.equal(missing.httpStatus, 200);
    const bad = await list({ id: "nope" }, { id: "nope" });
    assert.equal(bad.code, 3);
    assert.deepEqual(fields(bad), ["id"]);
    const order = await list({ orderBy: "ALIASES_ASC" }, { order_by: "ALIASES_ASC" });
    assert.equal(order.code, 3);
    assert.deepEqual(fields(order), ["order_by"]);
  });

  test("List needs a verified caller", async () => {
    const out = await wire().call(methodOf(Advisories, "List"), {}, { method: "GET", path: "/vulnerabilities/v1/advisories" });
    assert.equal(out.code, 16);
  });
});
