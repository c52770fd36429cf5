import assert from "node:assert/strict";
import { test } from "node:test";
import type { JsonObject } from "@bufbuild/protobuf";
import { AdvisoriesService } from "../../gen/platform/vulnerabilities/v2/advisories_service_pb.js";
import { importOsvFeed } from "../support/osv-import.js";
import { feedOf, osvRecord } from "../support/osv-records.js";
import { serveOverWires } from "../support/over-wires.js";
import { methodOf, type Wire } from "../support/wires.js";

/**
 * ListAdvisories serves advisory messages it mapped before (kept per row etag): a record imported
 * anew while the server runs is served as it now stands on the next call, on every wire.
 */


const { server, wires } = serveOverWires();

const summaries = async (wire: Wire, name: string) => {
  const out = await wire.call(
    methodOf(AdvisoriesService, "ListAdvisories"),
    { artifactNames: [name] },
    { method: "GET", path: `/vulnerabilities/v2/advisories?artifactNames=${name}` },
    server().ownerToken,
  );
  assert.equal(out.code, 0, out.message);
  return ((out.body?.advisories as JsonObject[] | undefined) ?? []).map((a) => `${a.advisoryId}: ${a.summary} [${((a.aliases as string[] | undefined) ?? []).join(",")}]`);
};

test("a replaced record is served as it now stands, a withdrawn one no more, after being listed", async () => {
  for (const wire of wires()) {
    const name = `cached-${wire.name}`;
    const id = `RUSTSEC-2099-${wire.name}`;
    const version = (modified: string, summary: string, extra: object = {}) => feedOf(osvRecord(id, { name, modified, summary, ...extra }));

    await importOsvFeed(server().store.db, version("2024-01-01T00:00:00Z", "first"));
    assert.deepEqual(await summaries(wire, name), [`${id}: first []`], wire.name);
    assert.deepEqual(await summaries(wire, name), [`${id}: first []`], `${wire.name}, listed again`);

    await importOsvFeed(server().store.db, version("2024-02-01T00:00:00Z", "second", { aliases: ["CVE-2099-9"] }));
    assert.deepEqual(await summaries(wire, name), [`${id}: second [CVE-2099-9]`], `${wire.name}: replaced`);

    await importOsvFeed(server().store.db, version("2024-03-01T00:00:00Z", "second", { aliases: ["CVE-2099-9"], withdrawn: "2024-03-01T00:00:00Z" }));
    assert.deepEqual(await summaries(wire, name), [], `${wire.name}: withdrawn`);
  }
});

/**
 * A page's whole answer is kept while nothing is written (`readCachedPage`): asked again, the same
 * page is the same answer, down to its page token; after a write it is read and built anew.
 */
test("a page asked again is the same answer until the store changes, then the changed one", async () => {
  const page = async (wire: Wire, name: string) => {
    const out = await wire.call(
      methodOf(AdvisoriesService, "ListAdvisories"),
      { artifactNames: [name], pageSize: 1 },
      { method: "GET", path: `/vulnerabilities/v2/advisories?artifactNames=${name}&pageSize=1` },
      server().ownerToken,
    );
    assert.equal(out.code, 0, out.message);
    const advisories = (out.body?.advisories as JsonObject[] | undefined) ?? [];
    return { summaries: advisories.map((a) => a.summary), token: out.body?.nextPageToken, total: Number(out.body?.totalCount) };
  };
  for (const wire of wires()) {
    const name = `kept-${wire.name}`;
    const record = (n: number, summary: string, modified = "2024-01-01T00:00:00Z") => osvRecord(`RUSTSEC-2098-${n}${wire.name}`, { name, modified, summary });
    await importOsvFeed(server().store.db, feedOf(record(1, "one"), record(2, "two")));
    const first = await page(wire, name);
    assert.equal(first.total, 2, wire.name);
    assert.notEqual(first.token, "", wire.name);
    assert.deepEqual(await page(wire, name), first, `${wire.name}: asked again, the kept answer`);

    await importOsvFeed(server().store.db, feedOf(record(1, "one, amended", "2024-02-01T00:00:00Z"), record(2, "two, amended", "2024-02-01T00:00:00Z")));
    const changed = await page(wire, name);
    assert.deepEqual(changed.summaries, [`${first.summaries[0]}, amended`], `${wire.name}: after a write`);
    assert.notEqual(changed.token, first.token, wire.name);
  }
});
