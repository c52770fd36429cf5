import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { MAX_UID_LENGTH, newChildUid } from "../../src/aip/uidp.js";
import { insertGroup } from "../../src/domains/iam/store/groups.js";
import { startTestServer, type TestServer } from "../support/test-server.js";

/**
 * Groups nest until a uid would pass MAX_UID_LENGTH (4096 characters, the most any uid field takes):
 * a create below the deepest group is INVALID_ARGUMENT naming `parent`, never a stored uid that
 * every later call calls "not a uid".
 */
let server: TestServer;

before(async () => {
  server = await startTestServer({ logLevel: "silent" });
});

after(() => server.close());

test("a create below a group nested as deep as uids allow is refused on `parent`; the deepest group stays readable", async () => {
  let deepest = server.org.uid;
  while (deepest.length + 17 <= MAX_UID_LENGTH) {
    const uid = newChildUid(deepest);
    await insertGroup(server.store.db, { uid, parent_uid: deepest, name: "level", description: "", create_time: 1, update_time: 1 });
    deepest = uid;
  }
  const auth = { authorization: `Bearer ${server.ownerToken}`, "content-type": "application/json" };
  const read = await fetch(`${server.apiUrl}/iam/v2/groups/${deepest}`, { headers: auth });
  assert.equal(read.status, 200);
  for (const path of [`/iam/v2/groups/${deepest}`, `/registry/v2/repos/${deepest}`, `/iam/v2/identities/${deepest}`]) {
    const res = await fetch(`${server.apiUrl}${path}`, { method: "POST", headers: auth, body: JSON.stringify({ name: "one too many" }) });
    const body = (await res.json()) as { code: number; details: Array<{ fieldViolations?: Array<{ field: string; description: string }> }> };
    assert.equal(res.status, 400, path);
    const violation = body.details.flatMap((d) => d.fieldViolations ?? [])[0];
    assert.equal(violation.field, "parent", path);
    assert.match(violation.description, /nested too deep/);
  }
});
