import { file_platform_events_v2_subscriptions_service, SubscriptionsService } from "../../../gen/platform/events/v2/subscriptions_service_pb.js";
import { bind, type Domain } from "../kit/domain.js";
import { eventsJobs, type EventsJobSettings } from "./jobs.js";
import { createSubscriptionsService } from "./subscriptions-service.js";
import { eventsMigrations } from "./migrations.js";

/**
 * Events (`platform.events.v2`): subscriptions of sinks to the events of a group and its
 * subtree. Every change's event is written to the outbox in its transaction
 * (`src/interceptors/event-interceptor.ts`, `store/outbox.ts`); the dispatcher
 * (`dispatcher.ts`) delivers them.
 */
export const events: Domain<EventsJobSettings> = {
  name: "events",
  files: [file_platform_events_v2_subscriptions_service],
  services: [bind(SubscriptionsService, createSubscriptionsService)],
  migrations: eventsMigrations,
  ownedByGroup: ["subscriptions"],
  deletedWithRepo: [],
  jobs: eventsJobs,
};
