import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { decodeProtectedHeader } from "jose";
import { ApiError } from "../../src/aip/errors.js";
import { KEY_RETIREMENT_DELAY_MS, keyStates, retiredKeys, rotateSigningKeys } from "../../src/access/signing-keys.js";
import { createTokenService, type TokenService } from "../../src/access/tokens.js";
import { listSigningKeys } from "../../src/store/server-keys.js";
import { openStore, type Store } from "../../src/server/open-store.js";
import { dropFresh, testDatabases } from "../support/databases.js";

/**
 * Signing keys shared by replicas: each replica is a token service on its own connections to one
 * database. A key added anywhere is accepted everywhere at once and published everywhere within
 * the reload interval; a rotated key signs from its activation time on; retired keys go.
 */
const ISSUER = "http://api.test";
const dir = mkdtempSync(join(tmpdir(), "platform-api-signing-keys-"));
after(() => rmSync(dir, { recursive: true, force: true }));
const kidOf = (token: string) => decodeProtectedHeader(token).kid;
const refused = (service: TokenService, token: string) => assert.rejects(service.verify(token, ISSUER), (e) => e instanceof ApiError && e.kind === "UNAUTHENTICATED");

for (const database of await testDatabases()) {
  describe(`signing keys across replicas on ${database.name}`, { skip: database.skip }, () => {
    const stores: Store[] = [];
    let url = "";
    let now = Date.parse("2026-11-26T00:00:00Z");
    const clock = () => now;
    /** A replica: its own store (connections) and token service; a long reload interval unless given. */
    const replica = async (reloadIntervalMs = 3600_000) => {
      const store = await openStore(url);
      stores.push(store);
      return { store, tokens: await createTokenService(store.db, ISSUER, clock, { reloadIntervalMs }) };
    };

    before(async () => {
      url = database.name === "sqlite" ? join(dir, `${Math.random()}.db`) : await database.fresh();
    });
    after(async () => {
      for (const store of stores) await store.close();
      await dropFresh(url);
    });

    test("a key rotated in by another process is accepted at once, signs from its activation, and is published after a reload", async () => {
      const a = await replica();
      const b = await replica();
      const first = kidOf((await a.tokens.issue({ subject: "s", audience: ISSUER })).token);

      const rotation = await rotateSigningKeys(a.store.db, now, 600_000);
      const c = await replica(0);
      assert.equal(kidOf((await c.tokens.issue({ subject: "s", audience: ISSUER })).token), first, "a pending key does not sign yet");
      assert.ok(c.tokens.jwks().keys.some((k) => k.kid === rotation.kid), "but it is published");
      assert.ok(!b.tokens.jwks().keys.some((k) => k.kid === rotation.kid), "b has not read the keys since");

      now += 600_000;
      const fresh = await c.tokens.issue({ subject: "s", audience: ISSUER });
      assert.equal(kidOf(fresh.token), rotation.kid, "from its activation time the new key signs");
      assert.equal((await b.tokens.verify(fresh.token, ISSUER)).sub, "s", "b reads the keys again for a kid it does not hold");
      assert.ok(b.tokens.jwks().keys.some((k) => k.kid === rotation.kid), "and publishes it from then on");
      assert.equal(kidOf((await b.tokens.issue({ subject: "s", audience: ISSUER })).token), rotation.kid, "and signs with it");
      // Until its next reload, a signs with the key it holds, which every replica still accepts.
      const stale = await a.tokens.issue({ subject: "s", audience: ISSUER });
      assert.equal(kidOf(stale.token), first);
      for (const replica of [b, c]) assert.equal((await replica.tokens.verify(stale.token, ISSUER)).sub, "s");
    });

    test("keys replaced long enough ago are removed by the next rotation; their tokens stop verifying after a reload", async () => {
      const a = await replica();
      const old = await a.tokens.issue({ subject: "old", audience: ISSUER, ttlSeconds: 60 });
      const rotation = await rotateSigningKeys(a.store.db, now, 0);
      assert.deepEqual(rotation.removed, [], "nothing has been replaced long enough");
      const states = keyStates(await listSigningKeys(a.store.db), now);
      assert.equal(states.at(-1)!.state, "signing");
      assert.ok(states.slice(0, -1).every((s) => s.state === "verifying"));

      now += KEY_RETIREMENT_DELAY_MS + 1;
      const before = await listSigningKeys(a.store.db);
      const expectRemoved = retiredKeys(before, now).map((r) => r.kid).sort();
      assert.ok(expectRemoved.includes(kidOf(old.token) as string));
      const next = await rotateSigningKeys(a.store.db, now, 0);
      assert.deepEqual([...next.removed].sort(), expectRemoved);
      const left = (await listSigningKeys(a.store.db)).map((r) => r.kid);
      assert.deepEqual(left.sort(), [rotation.kid, next.kid].sort(), "the key that signed until now and the new one stay");

      const later = await replica();
      const reissued = await later.tokens.issue({ subject: "old", audience: ISSUER });
      assert.equal(kidOf(reissued.token), next.kid);
      // a read its keys before the rotation and still signs with a removed one: nobody accepts that.
      const removed = await a.tokens.issue({ subject: "old", audience: ISSUER });
      assert.ok(expectRemoved.includes(kidOf(removed.token) as string));
      await refused(later.tokens, removed.token);
    });

    test("a replica reads the keys again once its set is older than the reload interval, and publishes a new key", async () => {
      const d = await replica(100);
      const rotation = await rotateSigningKeys(d.store.db, now, 600_000);
      assert.ok(!d.tokens.jwks().keys.some((k) => k.kid === rotation.kid));
      const deadline = Date.now() + 5_000;
      while (!d.tokens.jwks().keys.some((k) => k.kid === rotation.kid)) {
        assert.ok(Date.now() < deadline, "the key was not published within 5 s with a 100 ms reload interval");
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    });

    test("a store failure while reading the keys again fails the call as the store's, not as an invalid token", async () => {
      const a = await replica();
      stores.splice(stores.indexOf(a.store), 1);
      now += 1000;
      const rotation = await rotateSigningKeys((await replica()).store.db, now, 0);
      const signed = await (await replica()).tokens.issue({ subject: "s", audience: ISSUER });
      assert.equal(kidOf(signed.token), rotation.kid);
      await a.store.close();
      await assert.rejects(a.tokens.verify(signed.token, ISSUER), (e) => !(e instanceof ApiError));
    });
  });
}
