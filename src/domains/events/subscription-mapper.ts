import { create } from "@bufbuild/protobuf";
import { DeliveryStatusSchema, SubscriptionSchema, type Subscription } from "../../../gen/platform/events/v2/subscription_pb.js";
import { toTimestamp } from "../../aip/time.js";
import type { DeliveryCounts, SubscriptionRow } from "./store/subscriptions.js";

export function subscriptionFromRow(row: SubscriptionRow, counts: DeliveryCounts = { pending: 0, failed: 0 }): Subscription {
  const time = (ms: number | null) => (ms === null ? undefined : toTimestamp(Number(ms)));
  return create(SubscriptionSchema, {
    uid: row.uid,
    sink: row.sink,
    createTime: toTimestamp(Number(row.create_time)),
    updateTime: toTimestamp(Number(row.update_time)),
    delivery: create(DeliveryStatusSchema, {
      pendingCount: BigInt(counts.pending),
      failedCount: BigInt(counts.failed),
      lastSuccessTime: time(row.last_success_time),
      lastFailureTime: time(row.last_failure_time),
      lastFailureStatus: Number(row.last_failure_status),
      lastFailureMessage: row.last_failure_message,
    }),
  });
}
