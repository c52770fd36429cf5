/** The events domain's tables: subscriptions, the outbox of events and their deliveries; column conventions in src/store/tables.ts. */

export interface SubscriptionTable {
  /** A UIDP under `group_uid`. */
  uid: string;
  group_uid: string;
  sink: string;
  create_time: number;
  /** The last change to the subscription itself (its delivery status is not one): so far `create_time`, as nothing updates one. */
  update_time: number;
  /** The last 2xx answer of the sink; null before the first. */
  last_success_time: number | null;
  /** The last failed attempt: time, HTTP status (0 without an answer), what went wrong. */
  last_failure_time: number | null;
  last_failure_status: number;
  last_failure_message: string;
}

/**
 * The outbox: one row per change, written in the transaction of the change (so a rolled-back
 * change has none and a committed one has its row). Rows stay as the record of what happened.
 */
export interface EventTable {
  /** A UUID: the CloudEvent's `ce-id`. */
  id: string;
  /** Sorts events in the order they were written (time, then a per-process counter): deliveries go in this order. */
  position: string;
  /** The full CloudEvent type, e.g. `dev.platform.api.platform.registry.repo.created.v1`. */
  type: string;
  /** The uid of the resource the event is about. */
  subject: string;
  /** The group the resource belongs to: subscriptions of it and of its ancestors receive the event. */
  group_uid: string;
  time: number;
  /** JSON text of `{subject, act?}`: who made the change. */
  actor: string;
  /** JSON text (protojson of the request or resource). */
  body: string;
  /** The fully qualified proto name of the body (`ce-bodytype`), e.g. `platform.registry.v2.Tag`; empty when it has none. */
  body_type: string;
}

/** One event owed to one subscription: written with the event, deleted after the sink's 2xx. */
export interface EventDeliveryTable {
  subscription_uid: string;
  event_id: string;
  /** The event's position (deliveries of a subscription go oldest first). */
  position: string;
  /** `pending` (to be sent) or `failed` (given up after the retry period; kept for inspection). */
  state: string;
  attempts: number;
  /** When the first attempt failed; null before. The retry period counts from it. */
  first_failure_time: number | null;
  /** Not sent before this time (backoff). */
  next_attempt_time: number;
  /** A dispatcher holds the delivery until this time (claimed by a conditional update: one sender at a time). */
  lease_until: number;
}

export interface EventsTables {
  subscriptions: SubscriptionTable;
  events: EventTable;
  event_deliveries: EventDeliveryTable;
}
