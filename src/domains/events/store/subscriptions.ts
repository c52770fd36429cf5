import type { Selectable } from "kysely";
import type { Page } from "../../../aip/pagination.js";
import { rowNotFound } from "../../../store/errors.js";
import { applyPage, countRows, listConditions, type UidColumns, type UidpFilter, type Visibility } from "../../kit/list-query.js";
import type { Db } from "../../kit/schema.js";
import { getGroup } from "../../iam/index.js";
import type { SubscriptionTable } from "../tables.js";

export type SubscriptionRow = Selectable<SubscriptionTable>;

/** Delivery counts of one subscription. */
export interface DeliveryCounts {
  pending: number;
  failed: number;
}

/** Sortable subscription fields: API name to column. */
export const subscriptionOrderable = {
  sink: "sink",
  create_time: "create_time",
  created_at: "create_time",
  update_time: "update_time",
  updated_at: "update_time",
};

const SUBSCRIPTION_COLUMNS: UidColumns = { uid: "subscriptions.uid", parent: "subscriptions.group_uid", ownerSegments: 1 };

/** Throws NOT_FOUND when the subscription does not exist. */
export async function getSubscription(db: Db, uid: string): Promise<SubscriptionRow> {
  const row = await db.selectFrom("subscriptions").selectAll().where("uid", "=", uid).executeTakeFirst();
  if (!row) throw rowNotFound("subscription", uid);
  return row;
}

function filtered(db: Db, uidp: UidpFilter, visible: Visibility) {
  return db.selectFrom("subscriptions").where((eb) => eb.and(listConditions(eb, SUBSCRIPTION_COLUMNS, uidp, visible)));
}

/** One page (up to `limit + 1` rows, in `page.order`) and the count of all matches. */
export async function listSubscriptions(db: Db, uidp: UidpFilter, visible: Visibility, page: Page): Promise<{ rows: SubscriptionRow[]; total: number }> {
  const rows = await applyPage(filtered(db, uidp, visible).selectAll(), page, "subscriptions").execute();
  const total = await countRows(filtered(db, uidp, visible), page.total);
  return { rows, total };
}

/** Inserts a subscription (its update time is its create time); throws NOT_FOUND when its group does not exist. */
export async function insertSubscription(db: Db, row: Pick<SubscriptionRow, "uid" | "group_uid" | "sink" | "create_time">): Promise<SubscriptionRow> {
  await getGroup(db, row.group_uid);
  const full: SubscriptionRow = { ...row, update_time: row.create_time, last_success_time: null, last_failure_time: null, last_failure_status: 0, last_failure_message: "" };
  await db.insertInto("subscriptions").values(full).execute();
  return full;
}

/** Deletes a subscription and the deliveries it is still owed; throws NOT_FOUND. */
export async function deleteSubscription(db: Db, uid: string): Promise<void> {
  await getSubscription(db, uid);
  await db.deleteFrom("event_deliveries").where("subscription_uid", "=", uid).execute();
  await db.deleteFrom("subscriptions").where("uid", "=", uid).execute();
}

/** Pending and failed deliveries of each subscription of `uids`. */
export async function deliveryCounts(db: Db, uids: string[]): Promise<Map<string, DeliveryCounts>> {
  const counts = new Map<string, DeliveryCounts>(uids.map((u) => [u, { pending: 0, failed: 0 }]));
  if (uids.length === 0) return counts;
  const rows = await db
    .selectFrom("event_deliveries")
    .select(["subscription_uid", "state", (eb) => eb.fn.countAll<number>().as("n")])
    .where("subscription_uid", "in", uids)
    .groupBy(["subscription_uid", "state"])
    .execute();
  for (const row of rows) {
    const entry = counts.get(row.subscription_uid)!;
    if (row.state === "failed") entry.failed = Number(row.n);
    else entry.pending = Number(row.n);
  }
  return counts;
}
