import type { Db } from "../kit/schema.js";
import { digestsNaming } from "./store/image-reports.js";
import { enqueueMatches } from "./store/report-jobs.js";

/**
 * Queues a match of every stored image whose inventory holds one of `packages` (by ecosystem and
 * name), in the caller's transaction (`db` is the one writing the advisories that changed): the
 * report worker matches them again against the advisories as they are then.
 */
export async function queueMatchesFor(db: Db, packages: readonly { ecosystem: string; name: string }[], now: number): Promise<void> {
  await enqueueMatches(db, await digestsNaming(db, packages), now);
}
