import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, test } from "node:test";
import { BUILT_IN_ROLES } from "../../src/access/capabilities.js";
import { createTokenService } from "../../src/access/tokens.js";
import { prepareStore } from "../../src/server/bootstrap.js";
import { getRole } from "../../src/domains/iam/store/roles.js";
import { serverSecret } from "../../src/store/server-keys.js";
import { openStore, type Store } from "../../src/server/open-store.js";
import { dropFresh, testDatabases } from "../support/databases.js";

/**
 * Replicas starting together on one empty database: each opens its own connections, migrates,
 * brings the built-in roles up to date and loads the signing keys and page-token secret at the
 * same moment. Every one must start, and all must end up agreeing.
 */
const REPLICAS = 4;
const ISSUER = "http://api.test";
const dir = mkdtempSync(join(tmpdir(), "platform-api-concurrent-start-"));
after(() => rmSync(dir, { recursive: true, force: true }));

for (const database of await testDatabases()) {
  describe(`${REPLICAS} replicas starting at once on ${database.name}`, { skip: database.skip }, () => {
    const stores: Store[] = [];
    let url = "";
    after(async () => {
      for (const store of stores) await store.close();
      await dropFresh(url);
    });

    test("all start; roles, keys and secrets come out the same for every one", async () => {
      // SQLite: a file (each store its own connection); PostgreSQL: a fresh schema.
      url = database.name === "sqlite" ? join(dir, "platform.db") : await database.fresh();
      stores.push(...(await Promise.all(Array.from({ length: REPLICAS }, () => openStore(url)))));
      const now = Date.now();
      await Promise.all(stores.map((store) => prepareStore(store, now)));
      const services = await Promise.all(stores.map((store) => createTokenService(store.db, ISSUER, () => now)));
      const secrets = await Promise.all(stores.map((store) => serverSecret(store.db, "page-token-key", () => `secret-${Math.random()}`, now)));

      assert.equal(new Set(secrets).size, 1, "one page-token secret");
      for (const role of BUILT_IN_ROLES) assert.deepEqual((await getRole(stores[0].db, role.uid)).capabilities, [...role.capabilities].sort(), role.name);
      const roles = await stores[0].db.selectFrom("roles").select("uid").where("built_in", "=", 1).execute();
      assert.equal(roles.length, BUILT_IN_ROLES.length);
      for (const [i, issuer] of services.entries()) {
        const { token } = await issuer.issue({ subject: `replica-${i}`, audience: ISSUER });
        for (const verifier of services) assert.equal((await verifier.verify(token, ISSUER)).sub, `replica-${i}`);
      }
    });
  });
}
