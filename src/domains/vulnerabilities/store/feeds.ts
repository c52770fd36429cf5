import type { Kysely, Selectable, Updateable } from "kysely";
import { dialectOfDb } from "../../../store/dialect.js";
import type { Database, Db } from "../../kit/schema.js";
import type { AdvisoryFeedTable } from "../tables.js";

export type AdvisoryFeedRow = Selectable<AdvisoryFeedTable>;
/** What a finished sync writes to its feed's row. */
export type FeedOutcome = Omit<Updateable<AdvisoryFeedTable>, "url" | "lease_holder" | "lease_until">;

/** A feed never synced: no validators, no cursor, due now. */
function newFeedRow(url: string): AdvisoryFeedRow {
  const zero = { next_attempt_time: 0, last_attempt_time: 0, last_success_time: 0, failures: 0, lease_until: 0 };
  const counts = { records_read: 0, records_added: 0, records_updated: 0, records_unchanged: 0, records_rejected: 0 };
  return { url, etag: "", last_modified: "", cursor: "", last_error: "", lease_holder: "", ...zero, ...counts };
}

/** The rows of `urls` that exist (a feed never synced has none), in no order. */
export async function feedRows(db: Db, urls: readonly string[]): Promise<AdvisoryFeedRow[]> {
  if (urls.length === 0) return [];
  return db.selectFrom("advisory_feeds").selectAll().where("url", "in", urls).execute();
}

/**
 * Takes the lease of the feed `url` for `holder` until `now + leaseMs`, making its row when there is
 * none: only when no other holder's lease runs (an expired lease is taken over: its holder died or
 * stalled) and, unless `force`, when the feed is due (`next_attempt_time`). Returns the row as it
 * was before (the validators and cursor the sync starts from), or undefined when not taken.
 * Several processes may try at once: the conditional update decides, and on PostgreSQL the row is
 * read `FOR UPDATE SKIP LOCKED` first, so a process that finds it being taken moves on without
 * waiting (the outbox's claim does the same).
 */
export async function takeFeedLease(db: Kysely<Database>, url: string, holder: string, now: number, leaseMs: number, force = false): Promise<AdvisoryFeedRow | undefined> {
  const free = (row: AdvisoryFeedRow | undefined) => row === undefined || ((row.lease_until <= now || row.lease_holder === holder) && (force || row.next_attempt_time <= now));
  // Not due or held: no transaction (on SQLite it would take the write lock on every poll).
  const [seen] = await feedRows(db, [url]);
  if (!free(seen)) return undefined;
  if (!seen) await db.insertInto("advisory_feeds").values(newFeedRow(url)).onConflict((oc) => oc.column("url").doNothing()).execute();
  const postgres = dialectOfDb(db) === "postgres";
  return db.transaction().execute(async (trx) => {
    let query = trx.selectFrom("advisory_feeds").selectAll().where("url", "=", url);
    if (postgres) query = query.forUpdate().skipLocked();
    const row = await query.executeTakeFirst();
    if (!row || !free(row)) return undefined;
    let update = trx
      .updateTable("advisory_feeds")
      .set({ lease_holder: holder, lease_until: now + leaseMs })
      .where("url", "=", url)
      .where((eb) => eb.or([eb("lease_until", "<=", now), eb("lease_holder", "=", holder)]));
    if (!force) update = update.where("next_attempt_time", "<=", now);
    const result = await update.executeTakeFirst();
    return Number(result.numUpdatedRows) === 1 ? row : undefined;
  });
}

/** Extends `holder`'s lease of `url` to `until`; false when it no longer holds it (it expired and another took it). */
export async function renewFeedLease(db: Db, url: string, holder: string, until: number): Promise<boolean> {
  const result = await db.updateTable("advisory_feeds").set({ lease_until: until }).where("url", "=", url).where("lease_holder", "=", holder).executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** Writes a sync's outcome and gives the lease back, if `holder` still holds it; false when it does not (nothing written). */
export async function finishFeedSync(db: Db, url: string, holder: string, outcome: FeedOutcome): Promise<boolean> {
  const result = await db
    .updateTable("advisory_feeds")
    .set({ ...outcome, lease_holder: "", lease_until: 0 })
    .where("url", "=", url)
    .where("lease_holder", "=", holder)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}
