import assert from "node:assert/strict";
import { gzipSync } from "node:zlib";
import { describe, test } from "node:test";
import { testDatabases } from "../support/databases.js";
import { serveOverWires } from "../support/over-wires.js";

/**
 * One JSON rendering of a message whatever carries it (docs/decisions.md, "One JSON rendering"):
 * REST, Connect's JSON on its unary path and through the adapter (GET, a compressed request), and
 * an event's body write zero values (`"description": ""`) and every timestamp with milliseconds.
 * On SQLite and PostgreSQL.
 */

const MS_TIME = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

for (const database of await testDatabases()) {
  describe(`one JSON rendering (${database.name})`, { skip: database.skip }, () => {
    const served = serveOverWires({ database, logLevel: "silent" });
    const server = () => served.server();
    const auth = () => ({ authorization: `Bearer ${server().ownerToken}` });

    test("REST, Connect (unary path, GET, compressed) and the event body render a group alike", async () => {
      const made = await fetch(`${server().apiUrl}/iam/v2/groups/${server().org.uid}`, {
        method: "POST",
        headers: { ...auth(), "content-type": "application/json" },
        body: JSON.stringify({ name: "rendered" }),
      });
      assert.equal(made.status, 200);
      const uid = ((await made.json()) as { uid: string }).uid;

      const rest = await (await fetch(`${server().apiUrl}/iam/v2/groups/${uid}`, { headers: auth() })).json();
      const connectPost = await (
        await fetch(`${server().apiUrl}/platform.iam.v2.GroupsService/GetGroup`, { method: "POST", headers: { ...auth(), "content-type": "application/json" }, body: JSON.stringify({ uid }) })
      ).json();
      const message = encodeURIComponent(JSON.stringify({ uid }));
      const connectGet = await (await fetch(`${server().apiUrl}/platform.iam.v2.GroupsService/GetGroup?connect=v1&encoding=json&message=${message}`, { headers: auth() })).json();
      const compressed = await (
        await fetch(`${server().apiUrl}/platform.iam.v2.GroupsService/GetGroup`, {
          method: "POST",
          headers: { ...auth(), "content-type": "application/json", "content-encoding": "gzip", "accept-encoding": "gzip" },
          body: gzipSync(JSON.stringify({ uid })),
        })
      ).json();

      const group = rest as Record<string, unknown>;
      assert.equal(group.description, "", "a zero value is written");
      assert.match(String(group.createTime), MS_TIME);
      assert.match(String(group.updateTime), MS_TIME);
      assert.deepEqual(connectPost, rest, "Connect's unary path");
      assert.deepEqual(connectGet, rest, "Connect GET, through the adapter");
      assert.deepEqual(compressed, rest, "a compressed Connect request, through the adapter");

      const event = await server().store.db.selectFrom("events").select("body").where("subject", "=", uid).where("type", "like", "%group.created%").executeTakeFirstOrThrow();
      assert.deepEqual(JSON.parse(event.body), rest, "the event's body");
    });
  });
}
