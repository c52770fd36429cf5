import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { newChildUid, newRootUid } from "../../src/api/uidp.js";
import { deliveryFailed, deliverySucceeded, dueDeliveries, emitEvent, leaseDelivery } from "../../src/domains/events/store/outbox.js";
import { deleteSubscription, deliveryCounts, insertSubscription } from "../../src/domains/events/store/subscriptions.js";
import { insertGroup } from "../../src/domains/iam/store/groups.js";
import { openStore, type Store } from "../../src/store/store.js";
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

      const due = await dueDeliveries(store.db, 2000, 10);
      assert.deepEqual(due.map((d) => [d.subscription_uid, d.event_id]).sort(), [[onOrg.uid, first.id], [onFolder.uid, first.id]].sort());
      const head = due.find((d) => d.subscription_uid === onOrg.uid)!;
      assert.equal(await leaseDelivery(store.db, head, 2000, 1000), true);
      assert.equal(await leaseDelivery(store.db, head, 2500, 1000), false, "held by the first lease");
      assert.ok(!(await dueDeliveries(store.db, 2500, 10)).some((d) => d.subscription_uid === onOrg.uid), "a leased head holds its subscription back");
      await deliveryFailed(store.db, head, 2600, { status: 500, message: "HTTP 500" }, 5000);
      assert.ok(!(await dueDeliveries(store.db, 4000, 10)).some((d) => d.subscription_uid === onOrg.uid), "not before its next attempt");
      const again = (await dueDeliveries(store.db, 5000, 10)).find((d) => d.subscription_uid === onOrg.uid)!;
      assert.equal(again.event_id, first.id);
      assert.equal(again.attempts, 1);
      await deliverySucceeded(store.db, again, 5100);
      const next = (await dueDeliveries(store.db, 5200, 10)).find((d) => d.subscription_uid === onOrg.uid)!;
      assert.notEqual(next.event_id, first.id, "then the next event");
      await deliveryFailed(store.db, next, 5300, { status: 0, message: "refused" }, undefined);
      assert.deepEqual(await deliveryCounts(store.db, [onOrg.uid]), new Map([[onOrg.uid, { pending: 0, failed: 1 }]]));
      const row = await store.db.selectFrom("subscriptions").selectAll().where("uid", "=", onOrg.uid).executeTakeFirstOrThrow();
      assert.deepEqual([Number(row.last_success_time), Number(row.last_failure_time), row.last_failure_status, row.last_failure_message], [5100, 5300, 0, "refused"]);
      await deleteSubscription(store.db, onFolder.uid);
      assert.equal((await store.db.selectFrom("event_deliveries").select("event_id").where("subscription_uid", "=", onFolder.uid).execute()).length, 0);
    });
  });
}
