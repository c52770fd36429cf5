import { randomUUID } from "node:crypto";
import type { Selectable, Transaction } from "kysely";
import { isUidp, selfAndAncestors } from "../../../api/uidp.js";
import type { Database, Db } from "../../../store/tables.js";
import type { EventDeliveryTable, EventTable } from "../tables.js";

export type EventRow = Selectable<EventTable>;
export type DeliveryRow = Selectable<EventDeliveryTable>;

/** A change to record: the outbox adds the id, position and time. */
export interface NewEvent {
  /** The full CloudEvent type. */
  type: string;
  subject: string;
  group: string;
  actor: { subject: string; act?: Record<string, unknown> };
  body: unknown;
  /** The fully qualified proto name of `body`, when it is a proto message in JSON. */
  bodyType?: string;
}

/** The full CloudEvent type of an API event: `<prefix>.api.<name>.v1`, `name` as `iam.group.created`. */
export function apiEventType(prefix: string, name: string): string {
  return `${prefix}.api.${name}.v1`;
}

let counter = 0;
/** Sorts by time, then by order of writing within this process. */
function nextPosition(time: number): string {
  counter = (counter + 1) % 1e9;
  return `${String(time).padStart(15, "0")}-${String(counter).padStart(9, "0")}-${randomUUID().slice(0, 8)}`;
}

/**
 * Writes an event to the outbox, with one pending delivery for each subscription of its group
 * and of the group's ancestors, in `trx`: the transaction of the change it records, so the
 * event exists exactly when the change does.
 */
export async function emitEvent(trx: Transaction<Database>, event: NewEvent, time: number): Promise<EventRow> {
  const row: EventRow = {
    id: randomUUID(),
    position: nextPosition(time),
    type: event.type,
    subject: event.subject,
    group_uid: event.group,
    time,
    actor: JSON.stringify(event.actor),
    body: JSON.stringify(event.body ?? {}),
    body_type: event.bodyType ?? "",
  };
  await trx.insertInto("events").values(row).execute();
  if (!isUidp(event.group)) return row;
  const subscribers = await trx.selectFrom("subscriptions").select("uid").where("group_uid", "in", selfAndAncestors(event.group)).execute();
  if (subscribers.length > 0) {
    await trx
      .insertInto("event_deliveries")
      .values(
        subscribers.map((s) => ({
          subscription_uid: s.uid,
          event_id: row.id,
          position: row.position,
          state: "pending",
          attempts: 0,
          first_failure_time: null,
          next_attempt_time: time,
          lease_until: 0,
        })),
      )
      .execute();
  }
  return row;
}

/**
 * The oldest pending delivery of each subscription that is due and not leased, at most `limit`:
 * one per subscription, so a subscription's events go in order.
 */
export async function dueDeliveries(db: Db, now: number, limit: number): Promise<DeliveryRow[]> {
  const heads = await db
    .selectFrom("event_deliveries")
    .select(["subscription_uid", (eb) => eb.fn.min("position").as("position")])
    .where("state", "=", "pending")
    .groupBy("subscription_uid")
    .execute();
  const due: DeliveryRow[] = [];
  for (const head of heads) {
    if (due.length >= limit) break;
    const row = await db
      .selectFrom("event_deliveries")
      .selectAll()
      .where("subscription_uid", "=", head.subscription_uid)
      .where("position", "=", head.position as string)
      .where("state", "=", "pending")
      .executeTakeFirst();
    if (row && Number(row.next_attempt_time) <= now && Number(row.lease_until) <= now) due.push(row);
  }
  return due;
}

/** Takes a delivery for `leaseMs` unless another dispatcher holds it: true when this one got it. */
export async function leaseDelivery(db: Db, row: DeliveryRow, now: number, leaseMs: number): Promise<boolean> {
  const result = await db
    .updateTable("event_deliveries")
    .set({ lease_until: now + leaseMs })
    .where("subscription_uid", "=", row.subscription_uid)
    .where("event_id", "=", row.event_id)
    .where("lease_until", "<=", now)
    .where("state", "=", "pending")
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

export async function getEvent(db: Db, id: string): Promise<EventRow | undefined> {
  return db.selectFrom("events").selectAll().where("id", "=", id).executeTakeFirst();
}

/** The sink answered 2xx: the delivery is done and goes. */
export async function deliverySucceeded(db: Db, row: DeliveryRow, now: number): Promise<void> {
  await db.deleteFrom("event_deliveries").where("subscription_uid", "=", row.subscription_uid).where("event_id", "=", row.event_id).execute();
  await db.updateTable("subscriptions").set({ last_success_time: now }).where("uid", "=", row.subscription_uid).execute();
}

/** An attempt failed: retry at `nextAttempt`, or give up (`failed`) when undefined. */
export async function deliveryFailed(
  db: Db,
  row: DeliveryRow,
  now: number,
  failure: { status: number; message: string },
  nextAttempt: number | undefined,
): Promise<void> {
  await db
    .updateTable("event_deliveries")
    .set({
      attempts: Number(row.attempts) + 1,
      first_failure_time: row.first_failure_time ?? now,
      next_attempt_time: nextAttempt ?? now,
      state: nextAttempt === undefined ? "failed" : "pending",
      lease_until: 0,
    })
    .where("subscription_uid", "=", row.subscription_uid)
    .where("event_id", "=", row.event_id)
    .execute();
  await db
    .updateTable("subscriptions")
    .set({ last_failure_time: now, last_failure_status: failure.status, last_failure_message: failure.message.slice(0, 1024) })
    .where("uid", "=", row.subscription_uid)
    .execute();
}
