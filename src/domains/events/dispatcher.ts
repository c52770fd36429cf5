import type { Kysely } from "kysely";
import type { TokenService } from "../../access/tokens.js";
import type { EventsConfig } from "../../config.js";
import { OutboundFetchError, outboundRequest } from "../../outbound/fetch.js";
import type { Logger } from "../../logger.js";
import type { Database } from "../kit/schema.js";
import { sinkPolicy } from "./sink.js";
import { organizationTurns, periodicJob, queueJob, type Job } from "../kit/jobs.js";
import { claimDeliveries, deliveryFailed, deliverySucceeded, getEvent, pruneOutbox, type ClaimedDelivery, type DeliveryRow, type DeliveryTurns, type EventRow } from "./store/outbox.js";

/**
 * Delivers the outbox to the sinks, in the server process (`queueJob`): every `pollIntervalMs`,
 * and again as soon as a delivery ends (so a backlog drains at the sinks' pace, not one event per
 * subscription per poll), it claims the oldest due delivery of each subscription (at most
 * `concurrency` at once, at most `perOrganization` of them to one organization's subscriptions,
 * organizations taking turns) for a lease (`claimDeliveries`: `FOR UPDATE SKIP LOCKED` on
 * PostgreSQL, so the dispatchers of several processes on one database send each delivery once in
 * the normal case), POSTs the CloudEvent and deletes the delivery only after a 2xx. Anything else
 * (an answer that is not 2xx, a timeout, a refused or failed connection) is retried with
 * exponential backoff and jitter until `retryPeriodMs` after the first failure, then the delivery
 * is marked failed and stays for inspection. At-least-once: a crash between the 2xx and the delete
 * sends it again.
 */
export function startDispatcher(options: { db: Kysely<Database>; tokens: TokenService; config: EventsConfig; logger: Logger; source: string; now?: () => number }): Required<Job> {
  const { db, tokens, config, logger, source } = options;
  const now = options.now ?? Date.now;
  const policy = sinkPolicy(config);
  const leaseMs = config.timeoutMs * 2 + 5_000;
  const turns: DeliveryTurns = organizationTurns(Math.max(1, Math.min(config.perOrganization, config.concurrency)));
  const inFlightSubscriptions = new Set<string>();

  async function deliver(row: DeliveryRow) {
    const event = await getEvent(db, row.event_id);
    const subscription = await db.selectFrom("subscriptions").select(["uid", "group_uid", "sink"]).where("uid", "=", row.subscription_uid).executeTakeFirst();
    if (!event || !subscription) return;
    const started = now();
    let failure: { status: number; message: string };
    try {
      const { token } = await tokens.issue({ subject: `webhook:${subscription.group_uid}`, audience: subscription.sink, ttlSeconds: 600 });
      const res = await outboundRequest(new URL(subscription.sink), { method: "POST", headers: cloudEventHeaders(event, source, token), body: Buffer.from(cloudEventBody(event)) }, policy);
      if (res.status >= 200 && res.status < 300) {
        await deliverySucceeded(db, row, now());
        logger.info("event delivered", { subscription: subscription.uid, event: event.id, type: event.type, status: res.status, ms: now() - started });
        return;
      }
      failure = { status: res.status, message: `the sink answered HTTP ${res.status}` };
    } catch (error) {
      if (!(error instanceof OutboundFetchError)) throw error;
      failure = { status: 0, message: error.message };
    }
    const firstFailure = row.first_failure_time === null ? now() : Number(row.first_failure_time);
    const attempts = Number(row.attempts) + 1;
    const delay = Math.min(config.maxBackoffMs, config.initialBackoffMs * 2 ** Math.min(attempts - 1, 30));
    const next = now() + Math.round(delay * (0.5 + Math.random() / 2));
    const giveUp = next - firstFailure > config.retryPeriodMs;
    await deliveryFailed(db, row, now(), failure, giveUp ? undefined : next);
    logger.warn(giveUp ? "event delivery failed for good" : "event delivery failed; will retry", {
      subscription: subscription.uid,
      event: event.id,
      attempts,
      status: failure.status,
      reason: failure.message,
    });
  }

  return queueJob<ClaimedDelivery>({
    everyMs: config.pollIntervalMs,
    concurrency: config.concurrency,
    claim: async (room) => {
      const claimed = await claimDeliveries(db, now(), { limit: room, leaseMs, busy: [...inFlightSubscriptions], turns });
      for (const row of claimed) inFlightSubscriptions.add(row.subscription_uid);
      return claimed;
    },
    work: (row) => deliver(row),
    fair: { turns, organizationOf: (row) => row.organization },
    settled: (row) => inFlightSubscriptions.delete(row.subscription_uid),
    claimOnSettle: true,
    claimFailed: (error) => logger.error("event dispatcher poll failed", { error: String(error) }),
    workFailed: (row, error) => logger.error("event delivery failed", { subscription: row.subscription_uid, event: row.event_id, error: String(error) }),
  });
}

/**
 * Every `pruneIntervalMs` (and once at start) prunes the outbox of what is older than
 * `retentionMs` and owed to nobody (`pruneOutbox`).
 */
export function startOutboxPruning(options: { db: Kysely<Database>; config: EventsConfig; logger: Logger; now?: () => number }): Required<Job> {
  const { db, config, logger } = options;
  const now = options.now ?? Date.now;
  const prune = async () => {
    const pruned = await pruneOutbox(db, now() - config.retentionMs);
    if (pruned.events + pruned.deliveries > 0) logger.info("events pruned", { ...pruned, retentionMs: config.retentionMs });
  };
  return periodicJob(config.pruneIntervalMs, prune, (error) => logger.error("event pruning failed", { error: String(error) }), { startNow: true });
}

/** The CloudEvents 1.0 binary-mode headers of an event (hosted-api 8). */
export function cloudEventHeaders(event: EventRow, source: string, token: string): Record<string, string> {
  return {
    "content-type": "application/json",
    "user-agent": "platform-api",
    authorization: `Bearer ${token}`,
    "ce-specversion": "1.0",
    "ce-id": event.id,
    "ce-source": source,
    "ce-type": event.type,
    "ce-time": new Date(Number(event.time)).toISOString(),
    "ce-group": event.group_uid,
    "ce-audience": "customer",
    // CloudEvents 1.0: `subject`, when present, is a non-empty string.
    ...(event.subject === "" ? {} : { "ce-subject": event.subject }),
    ...(event.body_type === "" ? {} : { "ce-bodytype": event.body_type }),
  };
}

/** `{actor, body}`. */
export function cloudEventBody(event: EventRow): string {
  return `{"actor":${event.actor},"body":${event.body}}`;
}
