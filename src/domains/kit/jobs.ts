/**
 * The jobs kit: every background job of a domain is declared through it (the domain's `jobs`) and
 * scheduled by it, so the loop, the lease, the fair share between organizations and the drain are
 * written once. Nothing else in src/domains/ schedules (eslint.config.js refuses `setInterval`).
 * - `periodicJob`: a pass now and then, never two at once (retention, the advisory feeds, upload expiry).
 * - `queueJob`: claimed items worked a few at once (the report queue, event delivery).
 * - `takeLease`/`renewLease`/`releaseLease`/`keepLease`: one holder at a time over every process
 *   on the database, one row of `job_leases` per job and key.
 * - `OrganizationTurns`: organizations take turns, at most `perOrganization` items each in flight.
 */
export type { Job, JobContext, JobStart } from "./jobs/job.js";
export { periodicJob } from "./jobs/periodic.js";
export { queueJob, type QueueJobOptions } from "./jobs/queue.js";
export { keepLease, leaseHolder, leasesOf, releaseLease, renewLease, takeLease, type LeaseName, type LeaseState } from "./jobs/lease.js";
export { gave, heldBy, holdsItsShare, inTurnsByOrganization, organizationsAtShare, organizationTurns, took, type OrganizationTurns } from "./jobs/fair-claim.js";
