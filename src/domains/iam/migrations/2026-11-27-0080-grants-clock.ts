import { sql, type Kysely, type Migration } from "kysely";
import { dialectOfDb } from "../../../store/dialect.js";

/** Tables whose every change may change what some identity is granted (identities: their deletion). */
const WATCHED = [
  { table: "role_bindings", events: ["insert", "update", "delete"] },
  { table: "role_capabilities", events: ["insert", "update", "delete"] },
  { table: "identities", events: ["delete"] },
] as const;

/**
 * Frozen: `grants_clock`, one row whose `value` grows in the same transaction as every change to
 * role bindings, role capabilities and the deletion of identities (cascades included), by
 * triggers, so a process caching grants knows whether they may have changed by reading one row.
 * PostgreSQL: one statement-level trigger per table; SQLite: one row-level trigger per table and event.
 */
export const grantsClock: Migration = {
  async up(db: Kysely<any>) {
    await db.schema
      .createTable("grants_clock")
      .addColumn("id", "integer", (c) => c.primaryKey())
      .addColumn("value", "bigint", (c) => c.notNull())
      .execute();
    await db.insertInto("grants_clock").values({ id: 1, value: 0 }).execute();
    if (dialectOfDb(db) === "postgres") {
      await sql`create function grants_clock_tick() returns trigger language plpgsql as $$
        begin update grants_clock set value = value + 1 where id = 1; return null; end $$`.execute(db);
      for (const { table, events } of WATCHED) {
        await sql
          .raw(`create trigger ${table}_grants_clock after ${events.join(" or ")} on ${table} for each statement execute function grants_clock_tick()`)
          .execute(db);
      }
      return;
    }
    for (const { table, events } of WATCHED) {
      for (const event of events) {
        await sql
          .raw(`create trigger ${table}_${event}_grants_clock after ${event} on ${table} begin update grants_clock set value = value + 1 where id = 1; end`)
          .execute(db);
      }
    }
  },
};
