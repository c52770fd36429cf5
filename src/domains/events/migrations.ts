import type { Migration } from "kysely";
import { events as eventsTables } from "./migrations/2026-11-25-0014-events.js";
import { eventBodyType } from "./migrations/2026-11-27-0030-event-body-type.js";
import { subscriptionUpdateTime } from "./migrations/2026-11-27-0130-subscription-update-time.js";

/**
 * The events domain's frozen migrations by name (its `Domain` value's `migrations`), imported by
 * the composition root's migration list without loading the domain's services.
 */
export const eventsMigrations: Record<string, Migration> = {
  "2026-11-25-0014-events": eventsTables,
  "2026-11-27-0030-event-body-type": eventBodyType,
  "2026-11-27-0130-subscription-update-time": subscriptionUpdateTime,
};
