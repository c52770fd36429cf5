import { create } from "@bufbuild/protobuf";
import { EmptySchema } from "@bufbuild/protobuf/wkt";
import type { ServiceImpl } from "@connectrpc/connect";
import { SubscriptionSchema } from "../../../gen/platform/events/v2/subscription_pb.js";
import { ListSubscriptionsRequestSchema, ListSubscriptionsResponseSchema, SubscriptionsService } from "../../../gen/platform/events/v2/subscriptions_service_pb.js";
import { readPage } from "../../aip/list.js";
import { newChildUid } from "../../aip/uidp.js";
import { Violations } from "../../aip/validation.js";
import { visibilityKey } from "../../access/principal.js";
import { inTransaction } from "../../store/transaction.js";
import type { ServiceDeps } from "../kit/deps.js";
import { checkSink } from "./sink.js";
import { deleteSubscription, deliveryCounts, getSubscription, insertSubscription, listSubscriptions, subscriptionOrderable } from "./store/subscriptions.js";
import { subscriptionFromRow } from "./subscription-mapper.js";

/** SubscriptionsService: where the events of groups are delivered. Authorization ran in the interceptors. */
export function createSubscriptionsService({ db, pager, now, events }: ServiceDeps): ServiceImpl<typeof SubscriptionsService> {
  return {
    async getSubscription(req) {
      new Violations().uid("uid", req.uid).throwIfAny();
      const row = await getSubscription(db, req.uid);
      return subscriptionFromRow(row, (await deliveryCounts(db, [row.uid])).get(row.uid));
    },

    async listSubscriptions(req, ctx) {
      const page = await readPage({
        pager,
        schema: ListSubscriptionsRequestSchema,
        request: req,
        orderable: subscriptionOrderable,
        read: (p, uidp) => listSubscriptions(db, uidp, ctx.values.get(visibilityKey), p),
        map: (row) => row,
      });
      const counts = await deliveryCounts(
        db,
        page.items.map((r) => r.uid),
      );
      return create(ListSubscriptionsResponseSchema, { ...page, subscriptions: page.items.map((r) => subscriptionFromRow(r, counts.get(r.uid))) });
    },

    async createSubscription(req, ctx) {
      const subscription = req.subscription ?? create(SubscriptionSchema);
      new Violations().parent("parent", req.parent).throwIfAny();
      const sink = await checkSink(subscription.sink, events);
      const row = { uid: newChildUid(req.parent), group_uid: req.parent, sink: sink.href, create_time: now() };
      return inTransaction(db, ctx.signal, async (trx) => subscriptionFromRow(await insertSubscription(trx, row)));
    },

    async deleteSubscription(req, ctx) {
      new Violations().uid("uid", req.uid).throwIfAny();
      await inTransaction(db, ctx.signal, (trx) => deleteSubscription(trx, req.uid));
      return create(EmptySchema);
    },
  };
}
