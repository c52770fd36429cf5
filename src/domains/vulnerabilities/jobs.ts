import type { AdvisoryFeedsConfig } from "../../config.js";
import type { JobStart } from "../kit/jobs.js";
import type { Reactions } from "../kit/reactions.js";
import { startFeedSync, type FeedObserver } from "./feed-worker.js";

/** What the vulnerabilities' jobs are started with, beside the database and the logger. */
export interface VulnerabilitiesJobSettings {
  /** The advisory feeds to keep current (none: no sync). */
  advisoryFeeds: AdvisoryFeedsConfig;
  /** Told of each feed sync (the metrics). */
  feedObserver?: FeedObserver;
  /** Every domain's reactions: what a sync's changed advisories make other domains do, in its transaction. */
  reactions: Reactions;
}

/** The vulnerabilities' job: the advisory feeds kept current. */
export const vulnerabilitiesJobs: Record<string, JobStart<VulnerabilitiesJobSettings>> = {
  "advisory-feeds": ({ db, logger, advisoryFeeds, feedObserver, reactions }) => startFeedSync({ db, config: advisoryFeeds, logger, observer: feedObserver, reactions }),
};
