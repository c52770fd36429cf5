import type { Kysely, Selectable, Updateable } from "kysely";
import { leasesOf, releaseLease, takeLease, type LeaseName } from "../../kit/jobs.js";
import type { Database, Db } from "../../kit/schema.js";
import type { AdvisoryFeedTable } from "../tables.js";

/** What is stored of a feed: its validators, cursor, schedule and last outcome. */
export type FeedState = Selectable<AdvisoryFeedTable>;
/** A feed's row, with its lease: the worker that syncs it until `lease_until` ("" and 0 when none). */
export type AdvisoryFeedRow = FeedState & { lease_holder: string; lease_until: number };
/** What a finished sync writes to its feed's row. */
export type FeedOutcome = Omit<Updateable<AdvisoryFeedTable>, "url">;

/** The job whose leases are the feeds' (one per URL). */
const FEED_JOB = "advisory-feed";
export const feedLease = (url: string): LeaseName => ({ job: FEED_JOB, key: url });

/** A feed never synced: no validators, no cursor, due now. */
function newFeedRow(url: string): FeedState {
  const zero = { next_attempt_time: 0, last_attempt_time: 0, last_success_time: 0, failures: 0 };
  const counts = { records_read: 0, records_added: 0, records_updated: 0, records_unchanged: 0, records_rejected: 0 };
  return { url, etag: "", last_modified: "", cursor: "", last_error: "", ...zero, ...counts };
}

/** The rows of `urls` that exist (a feed never synced has none), in no order, with their leases. */
export async function feedRows(db: Db, urls: readonly string[]): Promise<AdvisoryFeedRow[]> {
  if (urls.length === 0) return [];
  const rows = await db.selectFrom("advisory_feeds").selectAll().where("url", "in", urls).execute();
  const leases = await leasesOf(db, FEED_JOB, urls);
  return rows.map((row) => ({ ...row, lease_holder: leases.get(row.url)?.holder ?? "", lease_until: leases.get(row.url)?.until ?? 0 }));
}

/**
 * Takes the lease of the feed `url` for `holder` until `now + leaseMs`, making its row when there is
 * none once taken: only when no other holder's lease runs (an expired lease is taken over: its holder died or
 * stalled) and, unless `force`, when the feed is due (`next_attempt_time`), as `takeLease` decides.
 * Returns the row as it was before (the validators and cursor the sync starts from), or undefined
 * when not taken.
 */
export async function takeFeedLease(db: Kysely<Database>, url: string, holder: string, now: number, leaseMs: number, force = false): Promise<FeedState | undefined> {
  const due = async (db: Db) => {
    const row = await db.selectFrom("advisory_feeds").selectAll().where("url", "=", url).executeTakeFirst();
    return row === undefined || force || Number(row.next_attempt_time) <= now ? (row ?? newFeedRow(url)) : undefined;
  };
  const row = await takeLease(db, feedLease(url), holder, now, leaseMs, due);
  if (row) await db.insertInto("advisory_feeds").values(newFeedRow(url)).onConflict((oc) => oc.column("url").doNothing()).execute();
  return row;
}

/** Writes a sync's outcome and gives the lease back, if `holder` still holds it; false when it does not (nothing written). */
export async function finishFeedSync(db: Kysely<Database>, url: string, holder: string, outcome: FeedOutcome): Promise<boolean> {
  return releaseLease(db, feedLease(url), holder, async (trx) => {
    await trx.updateTable("advisory_feeds").set(outcome).where("url", "=", url).execute();
  });
}
