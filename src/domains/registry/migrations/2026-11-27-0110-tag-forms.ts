import { sql, type Kysely, type Migration } from "kysely";

/** Frozen copies of the name forms of 2026-11-26 (bit 1 referrer, 2 build date, 4 package epoch). */
const REFERRER = /^sha256-[0-9a-f]{64}(\.[A-Za-z0-9_-]+)?$/;
const DATE = /(^|[^0-9])(19|20)[0-9]{6}([0-9]{4}([0-9]{2})?)?($|[^0-9])/;
const EPOCH = /-r[0-9]+$/;
const formsOf = (name: string) => (REFERRER.test(name) ? 1 : 0) | (DATE.test(name) ? 2 : 0) | (EPOCH.test(name) ? 4 : 0);

/** Tags read per batch while the existing tags' forms are computed. */
const BATCH = 1000;

/**
 * Frozen: each tag's name forms (referrer, build date, package epoch) as a bit set, which ListTags
 * leaves out unless asked; existing tags get theirs computed from their names.
 */
export const tagForms: Migration = {
  async up(db: Kysely<any>) {
    await db.schema.alterTable("tags").addColumn("forms", "integer", (c) => c.notNull().defaultTo(0)).execute();
    let after = "";
    for (;;) {
      const rows: Array<{ uid: string; name: string }> = await db.selectFrom("tags").select(["uid", "name"]).where("uid", ">", after).orderBy("uid").limit(BATCH).execute();
      if (rows.length === 0) break;
      for (const row of rows) {
        const forms = formsOf(row.name);
        if (forms !== 0) await sql`update tags set forms = ${forms} where uid = ${row.uid}`.execute(db);
      }
      after = rows[rows.length - 1].uid;
    }
  },
};
