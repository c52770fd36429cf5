import type { EventsConfig, RetentionConfig, ScanConfig } from "../../config.js";
import { periodicJob, type JobStart } from "../kit/jobs.js";
import type { ContentStore } from "./content/content-store.js";
import { expireUploads } from "./gc.js";
import { startReportWorker } from "./report-worker.js";
import { startRetentionWorker } from "./retention-worker.js";
import { UPLOAD_LIFETIME_MS } from "./upload-lifetime.js";

/** What the registry's jobs are started with, beside the database and the logger. */
export interface RegistryJobSettings {
  /** The blobs the registry host stores (a folder or an S3 bucket). */
  content: ContentStore;
  /** The first segments of the events' types the jobs emit. */
  events: Pick<EventsConfig, "typePrefix">;
  /** How the retention policies are applied. */
  retention: RetentionConfig;
  /** The threads images are scanned on for their vulnerability reports. */
  scan: ScanConfig;
}

/** How often abandoned uploads are expired (`UPLOAD_LIFETIME_MS` after their start), ms. */
const UPLOAD_EXPIRY_INTERVAL_MS = 3600 * 1000;

/** The registry's jobs: the report queue, retention, and the expiry of abandoned uploads. */
export const registryJobs: Record<string, JobStart<RegistryJobSettings>> = {
  reports: ({ db, content, logger, events, scan }) =>
    startReportWorker({ db, content, logger, typePrefix: events.typePrefix, scan: { size: scan.threads, heapMb: scan.threadMemoryBytes / 1024 ** 2, cpuBudgetMs: scan.cpuBudgetMs } }),
  retention: ({ db, logger, events, retention: config }) => startRetentionWorker({ db, config, logger, typePrefix: events.typePrefix }),
  "upload-expiry": ({ db, content, logger }) =>
    periodicJob(
      UPLOAD_EXPIRY_INTERVAL_MS,
      async () => void (await expireUploads(db, content, Date.now() - UPLOAD_LIFETIME_MS)),
      (error) => logger.warn("upload cleanup failed", { error: String(error) }),
    ),
};
