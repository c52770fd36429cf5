import assert from "node:assert/strict";
import { test } from "node:test";
import { sql } from "kysely";
import { GroupsService } from "../../gen/platform/iam/v2/groups_service_pb.js";
import { serveOverWires } from "../support/over-wires.js";
import { methodOf, reasonOf } from "../support/wires.js";

/**
 * A database that cannot grow (a full disk; here SQLite's `max_page_count`): writes fail
 * RESOURCE_EXHAUSTED / STORAGE_FULL having written nothing, the log says the storage is full (not
 * the ROLLBACK that failed after SQLite had ended the transaction itself), and writes succeed again
 * once there is room.
 */

const { server, wires } = serveOverWires({ logLevel: "info" });

const pages = async () => Number((await sql<{ page_count: number }>`pragma page_count`.execute(server().store.db)).rows[0].page_count);

test("a full database: RESOURCE_EXHAUSTED on every wire, nothing written, the cause logged; writable again after", async () => {
  await sql.raw(`pragma max_page_count = ${await pages()}`).execute(server().store.db);
  const description = "x".repeat(400);
  for (const wire of wires()) {
    let failed;
    for (let i = 0; i < 40 && !failed; i++) {
      const name = `full ${wire.name} ${i}`;
      const out = await wire.call(
        methodOf(GroupsService, "CreateGroup"),
        { parent: server().org.uid, group: { name, description } },
        { method: "POST", path: `/iam/v2/groups/${server().org.uid}`, body: { name, description } },
        server().ownerToken,
      );
      if (out.code !== 0) failed = { out, name };
    }
    assert.ok(failed, `${wire.name}: the database filled up`);
    assert.equal(failed.out.code, 8, failed.out.message);
    assert.equal(reasonOf(failed.out), "STORAGE_FULL");
    if (wire.name === "rest") assert.equal(failed.out.httpStatus, 429);
    const stored = await server().store.db.selectFrom("groups").select("uid").where("name", "=", failed.name).execute();
    assert.deepEqual(stored, [], "nothing written");
  }
  assert.ok(server().logs.some((line) => line.includes("storage is full") && line.includes("database or disk is full")), "the cause is logged");
  assert.ok(!server().logs.some((line) => line.includes("cannot rollback")), "not the failed rollback");
  await sql.raw("pragma max_page_count = 1073741823").execute(server().store.db);
  const after = await wires()[0].call(methodOf(GroupsService, "CreateGroup"), { parent: server().org.uid, group: { name: "room again" } }, { method: "POST", path: "" }, server().ownerToken);
  assert.equal(after.code, 0, after.message);
});
