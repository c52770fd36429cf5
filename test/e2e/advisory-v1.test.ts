// Advisory v1 (`/advisory/v1/`, spec 9.1) on every wire: the v2 documents and vulnerability metadata
// in v1 shapes (v1 field names, the full list without paging or total, what is missing an empty list
// with 200), on the shipped RustSec feed; v2's validation and no credential needed.
import assert from "node:assert/strict";
import { test } from "node:test";
import type { JsonObject } from "@bufbuild/protobuf";
import { SecurityAdvisory } from "../../gen/platform/advisory/v1/advisory_pb.js";
import { SecurityAdvisoryService } from "../../gen/platform/advisory/v2/security_advisory_service_pb.js";
import { readOsvFeed } from "../../src/engines/advisories/osv/feed.js";
import { importOsvFeed } from "../support/osv-import.js";
import { RUSTSEC_DIR } from "../support/osv-records.js";
import { serveOverWires } from "../support/over-wires.js";
import { methodOf, reasonOf, type Outcome, violatedFields, queryString as query } from "../support/wires.js";

const served = serveOverWires({
  async prepare(server) {
    await importOsvFeed(server.store.db, readOsvFeed([RUSTSEC_DIR]));
  },
});

const items = (out: Outcome) => (out.body?.items as JsonObject[] | undefined) ?? [];

/** Every item of a v2 List, following its page tokens (over gRPC). */
async function allV2(name: string, listField: string, request: JsonObject): Promise<JsonObject[]> {
  const out: JsonObject[] = [];
  let pageToken = "";
  do {
    const page = await served.wire("grpc").call(methodOf(SecurityAdvisoryService, name), { ...request, pageSize: 200, pageToken }, { method: "GET", path: "" }, undefined);
    assert.equal(page.code, 0, page.message);
    out.push(...((page.body?.[listField] as JsonObject[] | undefined) ?? []));
    pageToken = (page.body?.nextPageToken as string | undefined) ?? "";
  } while (pageToken !== "");
  return out;
}

/** A v2 document or metadata in the v1 shape, as the v1 answers must be: times renamed, nothing else. */
const renamed = (item: JsonObject, names: Record<string, string>): JsonObject =>
  Object.fromEntries(Object.entries(item).map(([key, value]) => [names[key] ?? key, value]));

served.describeOverWires((wireName) => `SecurityAdvisory v1 over ${wireName}, without a token`, ({ server, wire, wireName }) => {
  const call = (name: string, path: string, request: JsonObject, params: Record<string, string | string[]>) =>
    wire().call(methodOf(SecurityAdvisory, name), request, { method: "GET", path: `${path}?${query(params)}` }, undefined);

  test("ListDocuments: every document of the v2 List, in one answer, without paging or total", async () => {
    const out = await call("ListDocuments", "/advisory/v1/documents", {}, {});
    assert.equal(out.code, 0, out.message);
    assert.equal(out.body?.nextPageToken, undefined);
    assert.equal(out.body?.totalCount, undefined);
    const v2 = await allV2("ListDocuments", "documents", {});
    assert.ok(v2.length > 200, "more than one v2 page");
    const expected = v2.map((doc) => ({ ...doc, advisories: (doc.advisories as JsonObject[]).map((a) => renamed(a, { withdrawn: "withdrawnAt" })) }));
    assert.deepEqual(items(out), expected);
    assert.ok(items(out).some((doc) => (doc.advisories as JsonObject[]).some((a) => a.withdrawnAt !== undefined)), "a withdrawn record's advisory, marked");

    const openssl = await call("ListDocuments", "/advisory/v1/documents", { id: "openssl" }, { id: "openssl" });
    assert.deepEqual(items(openssl).map((d) => d.id), ["openssl"]);
    const byCve = await call("ListDocuments", "/advisory/v1/documents", { cves: ["CVE-2016-10931"] }, { cves: ["CVE-2016-10931"] });
    assert.deepEqual(items(byCve).map((d) => [d.id, (d.advisories as JsonObject[]).map((a) => a.id)]), [["openssl", ["RUSTSEC-2016-0001"]]]);
    const byName = await call("ListDocuments", "/advisory/v1/documents", { artifactNames: ["smallvec", "openssl-src"] }, { artifact_names: ["smallvec", "openssl-src"] });
    assert.deepEqual(items(byName).map((d) => d.id), ["openssl-src", "smallvec"]);
  });

  test("ListVulnerabilityMetadata: every record in v1 names (created_at, updated_at, withdrawn_at)", async () => {
    const out = await call("ListVulnerabilityMetadata", "/advisory/v1/metadata", {}, {});
    assert.equal(out.code, 0, out.message);
    const v2 = await allV2("ListVulnerabilityMetadata", "vulnerabilityMetadata", {});
    assert.deepEqual(items(out), v2.map((m) => renamed(m, { published: "createdAt", modified: "updatedAt", withdrawn: "withdrawnAt" })));
    const one = await call("ListVulnerabilityMetadata", "/advisory/v1/metadata", { id: "CVE-2016-10931" }, { id: "CVE-2016-10931" });
    const [record] = items(one);
    assert.equal(record.id, "RUSTSEC-2016-0001");
    assert.ok(typeof record.createdAt === "string" && typeof record.updatedAt === "string");
    assert.deepEqual(record.aliases, ["CVE-2016-10931", "GHSA-34p9-f4q3-c4r7"]);
  });

  test("what is missing is an empty list with 200; bad filters are INVALID_ARGUMENT naming the field", async () => {
    for (const [name, path, request, params] of [
      ["ListDocuments", "/advisory/v1/documents", { id: "no-such-crate" }, { id: "no-such-crate" }],
      ["ListVulnerabilityMetadata", "/advisory/v1/metadata", { id: "RUSTSEC-1999-0001" }, { id: "RUSTSEC-1999-0001" }],
    ] as Array<[string, string, JsonObject, Record<string, string>]>) {
      const out = await call(name, path, request, params);
      assert.equal(out.code, 0, out.message);
      assert.deepEqual(items(out), []);
      if (wireName === "rest") assert.equal(out.httpStatus, 200);
    }
    const many = await call("ListVulnerabilityMetadata", "/advisory/v1/metadata", { ids: Array.from({ length: 201 }, (_, i) => `X-${i}`) }, { ids: Array.from({ length: 201 }, (_, i) => `X-${i}`) });
    assert.equal(many.code, 3);
    assert.equal(reasonOf(many), "INVALID_ARGUMENT");
    assert.deepEqual(violatedFields(many), ["ids"]);
  });

  if (wireName === "rest") {
    test("REST answers use v1's proto field names", async () => {
      const res = await fetch(`http://127.0.0.1:${server().apiPort}/advisory/v1/metadata?id=RUSTSEC-2016-0001`);
      assert.equal(res.status, 200);
      const [record] = ((await res.json()) as { items: JsonObject[] }).items;
      assert.ok("created_at" in record && "updated_at" in record && !("createdAt" in record), Object.keys(record).join(","));
      const docs = (await (await fetch(`http://127.0.0.1:${server().apiPort}/advisory/v1/documents?id=openssl`)).json()) as { items: Array<{ advisories: JsonObject[] }> };
      assert.ok("package_namespace" in docs.items[0].advisories[0]);
      assert.ok("range_type" in (docs.items[0].advisories[0].events as JsonObject[])[0]);
    });
  }
});
