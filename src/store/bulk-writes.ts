import { sql, type Kysely } from "kysely";
import { dialectOfDb } from "./dialect.js";

/** SQLite's default: an automatic checkpoint once the WAL holds 1,000 pages (4 MB). */
const WAL_AUTOCHECKPOINT = 1_000;
/**
 * During a bulk write: every 10,000 pages (40 MB). An import's batches are 3 to 4 MB each, so at
 * the default nearly every commit would also checkpoint and sync the database file.
 */
const BULK_WAL_AUTOCHECKPOINT = 10_000;

/**
 * Runs `run`, a long series of write transactions on `db` (an import), with SQLite checkpointing
 * its write-ahead log ten times less often, then as before. The WAL stays bounded (40 MB plus one
 * transaction); what is committed is as durable as ever. Other dialects: just `run`.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function withBulkWrites<T>(db: Kysely<any>, run: () => Promise<T>): Promise<T> {
  if (dialectOfDb(db) !== "sqlite") return run();
  await sql.raw(`pragma wal_autocheckpoint = ${BULK_WAL_AUTOCHECKPOINT}`).execute(db);
  try {
    return await run();
  } finally {
    await sql.raw(`pragma wal_autocheckpoint = ${WAL_AUTOCHECKPOINT}`).execute(db);
  }
}
