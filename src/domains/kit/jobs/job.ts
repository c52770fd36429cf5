import type { Kysely } from "kysely";
import type { Logger } from "../../../logger.js";
import type { Database } from "../schema.js";

/** A running background job: started with the server, closed with it. */
export interface Job {
  /** Stops taking work and waits for the work in flight. */
  close(): Promise<void>;
  /** Works everything due now and waits for it (tests, the bench); absent when there is nothing to drain. */
  drain?(): Promise<void>;
}

/** What every job is started with, whatever its domain. */
export interface JobContext {
  db: Kysely<Database>;
  logger: Logger;
}

/**
 * A domain's job, declared in its `Domain` (`jobs`): started in every server process with the
 * context and the settings `S` its domain's jobs need (`src/server/domains.ts` startJobs).
 */
export type JobStart<S> = (context: JobContext & S) => Job;
