import { randomUUID } from "node:crypto";
import type { Kysely, Selectable, Transaction } from "kysely";
import { isUidp, rootOf, selfAndAncestors, subtreeRange } from "../../../aip/uidp.js";
import { dialectOfDb } from "../../../store/dialect.js";
import { holdsItsShare, inTurnsByOrganization, organizationsAtShare, took, type OrganizationTurns } from "../../kit/jobs.js";
import type { Database, Db } from "../../kit/schema.js";
import type { EventDeliveryTable, EventTable } from "../tables.js";

export type EventRow = Selectable<EventTable>;
export type DeliveryRow = Selectable<EventDeliveryTable>;
/** A claimed delivery, with the organization of its subscription. */
export type ClaimedDelivery = DeliveryRow & { organization: string };

/** A dispatcher's share of deliveries per organization (the root of a subscription's group). */
export type DeliveryTurns = OrganizationTurns;

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
 * Claims due deliveries for `leaseMs`, at most `limit`, none of the subscriptions in `busy`:
 * of each subscription only its oldest pending delivery (so its events go in order), and only
 * when it is due and no dispatcher holds it. With `turns`, none of an organization that holds
 * `perOrganization` deliveries, and organizations take turns: the heads are taken in rounds, the
 * oldest head of each organization (fewest held first) before the second of any, so one
 * organization's backlog or slow sinks leave the others their share of the slots. One
 * transaction: on PostgreSQL the rows are read `FOR UPDATE SKIP LOCKED`, so dispatchers of
 * several processes claim disjoint rows without waiting for each other; on SQLite (one writer)
 * the conditional update alone decides. A claimed row's `lease_until` keeps it from every other
 * dispatcher until it is settled or the lease runs out.
 */
export async function claimDeliveries(
  db: Kysely<Database>,
  now: number,
  options: { limit: number; leaseMs: number; busy: string[]; turns?: DeliveryTurns },
): Promise<ClaimedDelivery[]> {
  const { limit, turns } = options;
  if (limit <= 0) return [];
  // Nothing due: no transaction (on SQLite it would take the write lock on every poll).
  if ((await dueHeads(db, now, 1, options.busy, organizationsAtShare(turns)).execute()).length === 0) return [];
  const postgres = dialectOfDb(db) === "postgres";
  return db.transaction().execute(async (trx) => {
    const claimed: ClaimedDelivery[] = [];
    const tried = new Set(options.busy);
    // A pass ends short of `limit` only when organizations fill up: the next one looks past them.
    for (let pass = 0; pass < 4 && claimed.length < limit; pass++) {
      // Twice the room: enough heads of other organizations to take turns with.
      let query = dueHeads(trx, now, (limit - claimed.length) * 2, [...tried], organizationsAtShare(turns));
      if (postgres) query = query.forUpdate(["d"]).skipLocked();
      const heads = (await query.execute()).map((row) => ({ ...row, organization: rootOf(row.group_uid) }));
      if (heads.length === 0) break;
      let skipped = false;
      for (const head of inTurnsByOrganization(heads, (head) => head.organization, turns)) {
        if (claimed.length >= limit) break;
        tried.add(head.subscription_uid);
        if (holdsItsShare(turns, head.organization)) {
          skipped = true;
          continue;
        }
        const result = await trx
          .updateTable("event_deliveries")
          .set({ lease_until: now + options.leaseMs })
          .where("subscription_uid", "=", head.subscription_uid)
          .where("event_id", "=", head.event_id)
          .where("lease_until", "<=", now)
          .where("state", "=", "pending")
          .executeTakeFirst();
        if (Number(result.numUpdatedRows) !== 1) continue;
        const { group_uid: _group, ...row } = head;
        claimed.push({ ...row, lease_until: now + options.leaseMs });
        took(turns, head.organization);
      }
      if (!skipped) break;
    }
    return claimed;
  });
}

/**
 * The due, unleased head (oldest pending delivery) of each subscription not in `busy` and of no
 * organization in `organizations`, oldest first, at most `limit`, with the subscription's group:
 * from each subscription to its head, an index seek each, not a scan of every pending row (CROSS
 * JOIN keeps SQLite's planner to that order; PostgreSQL plans it as an inner join).
 */
function dueHeads(db: Db, now: number, limit: number, busy: string[], organizations: string[]) {
  let query = db
    .selectFrom("subscriptions as s")
    .crossJoin("event_deliveries as d")
    .selectAll("d")
    .select("s.group_uid")
    .whereRef("d.subscription_uid", "=", "s.uid")
    .where("d.state", "=", "pending")
    .where("d.position", "=", (eb) =>
      eb
        .selectFrom("event_deliveries as h")
        .select("h.position")
        .whereRef("h.subscription_uid", "=", "s.uid")
        .where("h.state", "=", "pending")
        .orderBy("h.position")
        .limit(1),
    )
    .where("d.next_attempt_time", "<=", now)
    .where("d.lease_until", "<=", now)
    .orderBy("d.position")
    .limit(limit);
  if (busy.length > 0) query = query.where("s.uid", "not in", busy);
  for (const organization of organizations) {
    const { low, high } = subtreeRange(organization);
    query = query.where((eb) => eb.or([eb("s.group_uid", "<", low), eb("s.group_uid", ">=", high)]));
  }
  return query;
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

/** Rows one pruning statement deletes at most (a round repeats until fewer are left). */
const PRUNE_BATCH = 1000;

/**
 * Deletes what retention lets go: failed deliveries given up before `cutoff`, then events
 * older than `cutoff` with no delivery left (delivered to every subscription, or whose failed
 * deliveries went). Pending deliveries and their events stay whatever their age. In batches of
 * `PRUNE_BATCH`; returns the counts deleted.
 */
export async function pruneOutbox(db: Kysely<Database>, cutoff: number): Promise<{ deliveries: number; events: number }> {
  let deliveries = 0;
  for (;;) {
    const batch = await db
      .selectFrom("event_deliveries")
      .select(["subscription_uid", "event_id"])
      .where("state", "=", "failed")
      .where("next_attempt_time", "<", cutoff)
      .limit(PRUNE_BATCH)
      .execute();
    for (const row of batch) {
      await db.deleteFrom("event_deliveries").where("subscription_uid", "=", row.subscription_uid).where("event_id", "=", row.event_id).where("state", "=", "failed").execute();
    }
    deliveries += batch.length;
    if (batch.length < PRUNE_BATCH) break;
  }
  let events = 0;
  for (;;) {
    const result = await db
      .deleteFrom("events")
      .where("id", "in", (eb) =>
        eb
          .selectFrom("events as e")
          .select("e.id")
          .where("e.time", "<", cutoff)
          .where(({ not, exists, selectFrom }) => not(exists(selectFrom("event_deliveries as d").select("d.event_id").whereRef("d.event_id", "=", "e.id"))))
          .limit(PRUNE_BATCH),
      )
      .executeTakeFirst();
    const n = Number(result.numDeletedRows);
    events += n;
    if (n < PRUNE_BATCH) break;
  }
  return { deliveries, events };
}
