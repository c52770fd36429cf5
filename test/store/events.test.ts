import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { newChildUid, newRootUid } from "../../src/aip/uidp.js";
import { claimDeliveries, deliveryFailed, deliverySucceeded, emitEvent, pruneOutbox, type ClaimedDelivery, type DeliveryTurns } from "../../src/domains/events/store/outbox.js";
import { deleteSubscription, deliveryCounts, insertSubscription } from "../../src/domains/events/store/subscriptions.js";
import { insertGroup } from "../../src/domains/iam/store/groups.js";
import { openStore, type Store } from "../../src/server/open-store.js";
import { inTransaction } from "../../src/store/transaction.js";
import { dropFresh, testDatabases } from "../support/databases.js";

for (const database of await testDatabases()) {
  describe(`events store on ${database.name}`, { skip: database.skip }, () => {
    let store: Store;
    let url: string;
    let org: string;
    let folder: string;
    let other: string;

    before(async () => {
      url = await database.fresh();
      store = await openStore(url);
      org = newRootUid();
      other = newRootUid();
      folder = newChildUid(org);
      await insertGroup(store.db, { uid: org, parent_uid: "", name: "ev-org", description: "", create_time: 1, update_time: 1 });
      await insertGroup(store.db, { uid: other, parent_uid: "", name: "ev-other", description: "", create_time: 1, update_time: 1 });
      await insertGroup(store.db, { uid: folder, parent_uid: org, name: "f", description: "", create_time: 1, update_time: 1 });
    });
    after(async () => {
      await store?.close();
      await dropFresh(url);
    });

    const event = (group: string, subject: string) => ({ type: "t.v1", subject, group, actor: { subject: "" }, body: { a: 1 } });

    test("an event goes to the subscriptions of its group and its ancestors only; a rolled-back one is not written; deliveries go oldest first, one per subscription, leased once, gone after success", async () => {
      const onOrg = await insertSubscription(store.db, { uid: newChildUid(org), group_uid: org, sink: "https://a.example/", create_time: 1 });
      const onFolder = await insertSubscription(store.db, { uid: newChildUid(folder), group_uid: folder, sink: "https://b.example/", create_time: 1 });
      const onOther = await insertSubscription(store.db, { uid: newChildUid(other), group_uid: other, sink: "https://c.example/", create_time: 1 });
      const first = await inTransaction(store.db, undefined, (trx) => emitEvent(trx, event(folder, "s1"), 1000));
      await inTransaction(store.db, undefined, (trx) => emitEvent(trx, event(org, "s2"), 1000));
      await assert.rejects(
        inTransaction(store.db, undefined, async (trx) => {
          await emitEvent(trx, event(folder, "rolled back"), 1000);
          throw new Error("the change failed");
        }),
      );
      assert.equal((await store.db.selectFrom("events").select("subject").where("subject", "=", "rolled back").execute()).length, 0);
      const counts = await deliveryCounts(store.db, [onOrg.uid, onFolder.uid, onOther.uid]);
      assert.deepEqual([counts.get(onOrg.uid)!.pending, counts.get(onFolder.uid)!.pending, counts.get(onOther.uid)!.pending], [2, 1, 0]);

      const claim = (now: number, busy: string[] = []) => claimDeliveries(store.db, now, { limit: 10, leaseMs: 1000, busy });
      assert.deepEqual((await claim(2000, [onOrg.uid, onFolder.uid])).length, 0, "busy subscriptions are left alone");
      const due = await claim(2000);
      assert.deepEqual(due.map((d) => [d.subscription_uid, d.event_id]).sort(), [[onOrg.uid, first.id], [onFolder.uid, first.id]].sort());
      const head = due.find((d) => d.subscription_uid === onOrg.uid)!;
      assert.deepEqual(await claim(2500), [], "held by their leases; a leased head holds its subscription back");
      await deliveryFailed(store.db, head, 2600, { status: 500, message: "HTTP 500" }, 5000);
      assert.ok(!(await claim(4000)).some((d) => d.subscription_uid === onOrg.uid), "not before its next attempt");
      const again = (await claim(5000)).find((d) => d.subscription_uid === onOrg.uid)!;
      assert.equal(again.event_id, first.id);
      assert.equal(again.attempts, 1);
      await deliverySucceeded(store.db, again, 5100);
      const next = (await claim(5200)).find((d) => d.subscription_uid === onOrg.uid)!;
      assert.notEqual(next.event_id, first.id, "then the next event");
      await deliveryFailed(store.db, next, 5300, { status: 0, message: "refused" }, undefined);
      assert.deepEqual(await deliveryCounts(store.db, [onOrg.uid]), new Map([[onOrg.uid, { pending: 0, failed: 1 }]]));
      const row = await store.db.selectFrom("subscriptions").selectAll().where("uid", "=", onOrg.uid).executeTakeFirstOrThrow();
      assert.deepEqual([Number(row.last_success_time), Number(row.last_failure_time), row.last_failure_status, row.last_failure_message], [5100, 5300, 0, "refused"]);
      await deleteSubscription(store.db, onFolder.uid);
      assert.equal((await store.db.selectFrom("event_deliveries").select("event_id").where("subscription_uid", "=", onFolder.uid).execute()).length, 0);
    });

    test("dispatchers claiming at once, each on its own connection, claim disjoint deliveries (FOR UPDATE SKIP LOCKED on PostgreSQL)", async () => {
      const group = newRootUid();
      await insertGroup(store.db, { uid: group, parent_uid: "", name: "ev-claims", description: "", create_time: 1, update_time: 1 });
      const subscriptions = [];
      for (let i = 0; i < 12; i++) subscriptions.push(await insertSubscription(store.db, { uid: newChildUid(group), group_uid: group, sink: `https://s${i}.example/`, create_time: 1 }));
      for (let i = 0; i < 3; i++) await inTransaction(store.db, undefined, (trx) => emitEvent(trx, event(group, `c${i}`), 10_000 + i));
      const others = await Promise.all([openStore(url), openStore(url), openStore(url)]);
      try {
        const mine = new Set(subscriptions.map((s) => s.uid));
        const claimed = (await Promise.all(others.map((o) => claimDeliveries(o.db, 20_000, { limit: 5, leaseMs: 60_000, busy: [] })))).flat().filter((d) => mine.has(d.subscription_uid));
        const keys = claimed.map((d) => `${d.subscription_uid} ${d.event_id}`);
        assert.equal(new Set(keys).size, keys.length, "no delivery claimed twice");
        assert.equal(new Set(claimed.map((d) => d.subscription_uid)).size, claimed.length, "one head per subscription");
        assert.ok(claimed.every((d) => d.position === claimed.find((c) => c.subscription_uid === d.subscription_uid)!.position));
      } finally {
        await Promise.all(others.map((o) => o.close()));
      }
    });

    test("organizations take turns: heads in rounds by organization, at most perOrganization held each, a full organization looked past", async () => {
      const [x, y] = [newRootUid(), newRootUid()];
      const xFolder = newChildUid(x);
      await insertGroup(store.db, { uid: x, parent_uid: "", name: "ev-turns-x", description: "", create_time: 1, update_time: 1 });
      await insertGroup(store.db, { uid: y, parent_uid: "", name: "ev-turns-y", description: "", create_time: 1, update_time: 1 });
      await insertGroup(store.db, { uid: xFolder, parent_uid: x, name: "f", description: "", create_time: 1, update_time: 1 });
      const mine = new Set<string>();
      for (let i = 0; i < 6; i++) {
        const group = i < 3 ? x : xFolder;
        mine.add((await insertSubscription(store.db, { uid: newChildUid(group), group_uid: group, sink: `https://x${i}.example/`, create_time: 1 })).uid);
      }
      for (let i = 0; i < 2; i++) mine.add((await insertSubscription(store.db, { uid: newChildUid(y), group_uid: y, sink: `https://y${i}.example/`, create_time: 1 })).uid);
      await inTransaction(store.db, undefined, (trx) => emitEvent(trx, event(xFolder, "x"), 30_000));
      await inTransaction(store.db, undefined, (trx) => emitEvent(trx, event(y, "y"), 30_001));
      const others = (await store.db.selectFrom("subscriptions").select("uid").execute()).map((s) => s.uid).filter((uid) => !mine.has(uid));
      const claim = (limit: number, turns: DeliveryTurns) => claimDeliveries(store.db, 40_000, { limit, leaseMs: 1000, busy: others, turns });
      const organizations = (rows: ClaimedDelivery[]) => rows.map((r) => (r.organization === x ? "x" : r.organization === y ? "y" : "?"));

      const turns: DeliveryTurns = { perOrganization: 1, held: new Map() };
      assert.deepEqual(organizations(await claim(2, turns)), ["x", "y"], "x's heads are older and fill the window, but x holds one at most: y's is looked past to");
      assert.deepEqual([...turns.held].sort(), [[x, 1], [y, 1]].sort());
      assert.deepEqual(await claim(10, turns), [], "both hold their share");
      const fresh = await claimDeliveries(store.db, 50_000, { limit: 4, leaseMs: 1000, busy: others, turns: { perOrganization: 10, held: new Map() } });
      assert.deepEqual(organizations(fresh), ["x", "y", "x", "y"], "in rounds: the oldest head of each organization, then the second");
    });

    test("retention prunes events owed to nobody and failed deliveries given up before the cutoff; pending ones stay at any age", async () => {
      const group = newRootUid();
      await insertGroup(store.db, { uid: group, parent_uid: "", name: "ev-retention", description: "", create_time: 1, update_time: 1 });
      const sub = await insertSubscription(store.db, { uid: newChildUid(group), group_uid: group, sink: "https://r.example/", create_time: 1 });
      const emit = (subject: string, time: number) => inTransaction(store.db, undefined, (trx) => emitEvent(trx, event(group, subject), time));
      const owed = (id: string) => store.db.selectFrom("event_deliveries").selectAll().where("event_id", "=", id).where("subscription_uid", "=", sub.uid).executeTakeFirstOrThrow();
      const delivered = await emit("delivered", 100);
      await deliverySucceeded(store.db, await owed(delivered.id), 150);
      const failed = await emit("failed", 100);
      await deliveryFailed(store.db, await owed(failed.id), 200, { status: 500, message: "HTTP 500" }, undefined);
      const pending = await emit("pending", 100);
      const recent = await emit("recent", 9_000);
      await deliverySucceeded(store.db, await owed(recent.id), 9_100);
      const failedLate = await emit("failed late", 100);
      await deliveryFailed(store.db, await owed(failedLate.id), 8_000, { status: 0, message: "refused" }, undefined);
      const nobody = await inTransaction(store.db, undefined, (trx) => emitEvent(trx, event(newRootUid(), "no subscriber"), 100));

      const pruned = await pruneOutbox(store.db, 5_000);
      assert.ok(pruned.deliveries >= 1 && pruned.events >= 3, JSON.stringify(pruned));
      const left = new Set((await store.db.selectFrom("events").select("id").execute()).map((r) => r.id));
      assert.deepEqual(
        [delivered, failed, pending, recent, failedLate, nobody].map((e) => [e.subject, left.has(e.id)]),
        [["delivered", false], ["failed", false], ["pending", true], ["recent", true], ["failed late", true], ["no subscriber", false]],
      );
      assert.equal((await owed(pending.id)).state, "pending");
      assert.equal((await owed(failedLate.id)).state, "failed", "given up after the cutoff: kept");
      assert.deepEqual(await pruneOutbox(store.db, 5_000), { deliveries: 0, events: 0 }, "nothing more to prune");
    });
  });
}
