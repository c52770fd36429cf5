import type { Insertable } from "kysely";
import type { Database, Db } from "../../kit/schema.js";
import type { RecordRows } from "../advisory-rows.js";

/** Rows per INSERT statement, well below SQLite's and PostgreSQL's limits on bound parameters. */
const ROWS_PER_INSERT = 100;
/** Values per `in (...)` list. */
const IDS_PER_QUERY = 500;

function chunks<T>(items: readonly T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

/** The stored `modified` of each of `ids` that is stored. */
export async function storedModified(db: Db, ids: readonly string[]): Promise<Map<string, string>> {
  const stored = new Map<string, string>();
  for (const part of chunks(ids, IDS_PER_QUERY)) {
    const rows = await db.selectFrom("osv_records").select(["uid", "modified"]).where("uid", "in", part).execute();
    for (const row of rows) stored.set(row.uid, row.modified);
  }
  return stored;
}

async function insertChunked<T extends keyof Database>(db: Db, table: T, rows: Insertable<Database[T]>[]): Promise<void> {
  for (const part of chunks(rows, ROWS_PER_INSERT)) await db.insertInto(table).values(part as never).execute();
}

/**
 * Writes records: those in `replacing` (stored already) lose their old rows first, names and
 * advisories included. Run it in a transaction so that a record is stored whole or not at all.
 */
export async function writeRecords(db: Db, records: readonly RecordRows[], replacing: readonly string[]): Promise<void> {
  for (const part of chunks(replacing, IDS_PER_QUERY)) {
    await db.deleteFrom("advisories").where("advisory_id", "in", part).execute();
    await db.deleteFrom("osv_names").where("record_uid", "in", part).execute();
    await db.deleteFrom("osv_records").where("uid", "in", part).execute();
  }
  await insertChunked(db, "osv_records", records.map((r) => r.record));
  await insertChunked(db, "osv_names", records.flatMap((r) => r.names));
  await insertChunked(db, "advisories", records.flatMap((r) => r.advisories));
}
