import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import type { JsonObject } from "@bufbuild/protobuf";
import { AdvisoriesService } from "../../gen/platform/vulnerabilities/v2/advisories_service_pb.js";
import { importOsvFeed } from "../../src/domains/vulnerabilities/osv-import.js";
import { feedOf, osvRecord } from "../support/osv-records.js";
import { startTestServer, type TestServer } from "../support/test-server.js";
import { allWires, methodOf, type Wire } from "../support/wires.js";

/**
 * ListAdvisories serves advisory messages it mapped before (kept per row etag): a record imported
 * anew while the server runs is served as it now stands on the next call, on every wire.
 */

let server: TestServer;
let wires: Wire[];

before(async () => {
  server = await startTestServer();
  wires = allWires(server.apiPort);
});

after(async () => {
  for (const wire of wires) wire.close();
  await server.close();
});

const summaries = async (wire: Wire, name: string) => {
  const out = await wire.call(
    methodOf(AdvisoriesService, "ListAdvisories"),
    { artifactNames: [name] },
    { method: "GET", path: `/vulnerabilities/v2/advisories?artifactNames=${name}` },
    server.ownerToken,
  );
  assert.equal(out.code, 0, out.message);
  return ((out.body?.advisories as JsonObject[] | undefined) ?? []).map((a) => `${a.advisoryId}: ${a.summary} [${((a.aliases as string[] | undefined) ?? []).join(",")}]`);
};

test("a replaced record is served as it now stands, a withdrawn one no more, after being listed", async () => {
  for (const wire of wires) {
    const name = `cached-${wire.name}`;
    const id = `RUSTSEC-2099-${wire.name}`;
    const version = (modified: string, summary: string, extra: object = {}) => feedOf(osvRecord(id, { name, modified, summary, ...extra }));

    await importOsvFeed(server.store.db, version("2024-01-01T00:00:00Z", "first"));
    assert.deepEqual(await summaries(wire, name), [`${id}: first []`], wire.name);
    assert.deepEqual(await summaries(wire, name), [`${id}: first []`], `${wire.name}, listed again`);

    await importOsvFeed(server.store.db, version("2024-02-01T00:00:00Z", "second", { aliases: ["CVE-2099-9"] }));
    assert.deepEqual(await summaries(wire, name), [`${id}: second [CVE-2099-9]`], `${wire.name}: replaced`);

    await importOsvFeed(server.store.db, version("2024-03-01T00:00:00Z", "second", { aliases: ["CVE-2099-9"], withdrawn: "2024-03-01T00:00:00Z" }));
    assert.deepEqual(await summaries(wire, name), [], `${wire.name}: withdrawn`);
  }
});
