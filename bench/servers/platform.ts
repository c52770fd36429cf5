import { mkdtempSync, rmSync } from "node:fs";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { newChildUid } from "../../src/api/uidp.js";
import { bootstrapOrganization } from "../../src/bootstrap.js";
import { defaultLimits } from "../../src/config.js";
import { createLogger } from "../../src/logger.js";
import { createServer } from "../../src/server.js";
import { insertGroup, type GroupRow } from "../../src/store/repositories/groups.js";
import { openStore } from "../../src/store/store.js";
import { announce } from "./messages.js";

/**
 * The platform server as `serve` runs it (SQLite file in WAL mode, silent
 * logger), over a store holding one organization, its owner, a folder and
 * CHILD_COUNT groups directly below the folder. Announces a PlatformReady.
 */

const CHILD_COUNT = 10_000;
const API_URL = "http://bench.local";
/** Rows per INSERT: 6 columns each, well below SQLite's bound-parameter limit. */
const CHUNK = 500;

const dir = mkdtempSync(join(tmpdir(), "platform-bench-"));
process.on("exit", () => rmSync(dir, { recursive: true, force: true }));

const seedStart = performance.now();
const store = await openStore(join(dir, "bench.db"));
const now = Date.now();
const { organization, identity } = await bootstrapOrganization(store, "bench", now);
const folder = await insertGroup(store.db, {
  uid: newChildUid(organization.uid),
  parent_uid: organization.uid,
  name: "folder",
  description: "",
  create_time: now,
  update_time: now,
});
const children: GroupRow[] = Array.from({ length: CHILD_COUNT }, (_, i) => ({
  uid: newChildUid(folder.uid),
  parent_uid: folder.uid,
  name: `group-${String(i).padStart(5, "0")}`,
  description: `bench group ${i}`,
  create_time: now,
  update_time: now,
}));
await store.db.transaction().execute(async (trx) => {
  for (let i = 0; i < children.length; i += CHUNK) {
    await trx.insertInto("groups").values(children.slice(i, i + CHUNK)).execute();
  }
});
const seedMs = performance.now() - seedStart;

const server = await createServer(
  store,
  { apiUrl: API_URL, registryUrl: "http://registry.bench.local", logLevel: "silent", limits: defaultLimits },
  createLogger("silent"),
);
const port = await new Promise<number>((resolve) =>
  server.api.server.listen(0, "127.0.0.1", () => resolve((server.api.server.address() as AddressInfo).port)),
);
const { token } = await server.tokens.issue({ subject: identity.uid, audience: API_URL });

announce({
  kind: "platform",
  port,
  token,
  folderUid: folder.uid,
  childCount: CHILD_COUNT,
  groupUid: children[CHILD_COUNT / 2].uid,
  seedMs,
});
