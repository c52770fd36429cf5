import { createHash } from "node:crypto";
import type { Kysely, Migration } from "kysely";

/** Advisories rewritten per statement batch while backfilling. */
const BATCH = 500;

/** An `affected[]` entry without the opaque objects no reader of an advisory uses (the record's document keeps them). */
function slim(affected: string): string {
  const entries = JSON.parse(affected) as Array<Record<string, unknown>>;
  return JSON.stringify(entries.map(({ database_specific: _d, ecosystem_specific: _e, ...rest }) => rest));
}

/**
 * Frozen: every advisory gets an `etag` (a digest of what it serves; a new one whenever the row is
 * written anew), and its `affected` entries lose `database_specific` and `ecosystem_specific`.
 * Existing rows are backfilled, in uid order, batch by batch.
 */
export const advisoryEtags: Migration = {
  async up(db: Kysely<any>) {
    await db.schema.alterTable("advisories").addColumn("etag", "text", (c) => c.notNull().defaultTo("")).execute();
    let after = "";
    for (;;) {
      const rows = await db
        .selectFrom("advisories")
        .selectAll()
        .where("uid", ">", after)
        .orderBy("uid")
        .limit(BATCH)
        .execute();
      for (const row of rows) {
        const affected = slim(row.affected as string);
        const etag = createHash("sha256")
          .update([row.advisory_id, row.ecosystem, row.artifact_name, affected, row.aliases, row.summary, row.severity, row.withdrawn_time, row.create_time, row.update_time].join("\0"))
          .digest("base64url")
          .slice(0, 22);
        await db.updateTable("advisories").set({ affected, etag }).where("uid", "=", row.uid).execute();
      }
      if (rows.length < BATCH) break;
      after = rows[rows.length - 1].uid as string;
    }
  },
};
