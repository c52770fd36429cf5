import type { TokenService } from "../../access/tokens.js";
import type { EventsConfig } from "../../config.js";
import type { JobStart } from "../kit/jobs.js";
import { startDispatcher, startOutboxPruning } from "./dispatcher.js";

/** What the events' jobs are started with, beside the database and the logger. */
export interface EventsJobSettings {
  /** Signs the token each delivery carries. */
  tokens: TokenService;
  events: EventsConfig;
  /** The API's base URL (events name their source under it). */
  apiUrl: string;
}

/** The events' jobs: delivery of the outbox to the sinks, and its pruning. */
export const eventsJobs: Record<string, JobStart<EventsJobSettings>> = {
  deliveries: ({ db, tokens, events, logger, apiUrl }) => startDispatcher({ db, tokens, config: events, logger, source: `${apiUrl}/events/v2/subscriptions` }),
  "event-pruning": ({ db, events, logger }) => startOutboxPruning({ db, config: events, logger }),
};
