import type { Kysely, Migration } from "kysely";

/**
 * Frozen: the proto name of each event's body (`ce-bodytype`), and the indexes retention
 * prunes by (events by time, deliveries by event).
 */
export const eventBodyType: Migration = {
  async up(db: Kysely<any>) {
    await db.schema.alterTable("events").addColumn("body_type", "text", (c) => c.notNull().defaultTo("")).execute();
    await db.schema.createIndex("events_time").on("events").columns(["time", "id"]).execute();
    await db.schema.createIndex("event_deliveries_event").on("event_deliveries").columns(["event_id"]).execute();
  },
};
