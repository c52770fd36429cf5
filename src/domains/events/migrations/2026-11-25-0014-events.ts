import type { Kysely, Migration } from "kysely";
import { binaryCollation, dialectOfDb } from "../../../store/dialect.js";

/** Frozen: subscriptions, the event outbox and the deliveries owed to each subscription. */
export const events: Migration = {
  async up(db: Kysely<any>) {
    const binary = binaryCollation(dialectOfDb(db));
    const text = (name: string) => [name, "text", (c: any) => c.notNull().modifyEnd(binary)] as const;

    await db.schema
      .createTable("subscriptions")
      .addColumn(...text("uid"))
      .addColumn(...text("group_uid"))
      .addColumn("sink", "text", (c) => c.notNull())
      .addColumn("create_time", "bigint", (c) => c.notNull())
      .addColumn("last_success_time", "bigint")
      .addColumn("last_failure_time", "bigint")
      .addColumn("last_failure_status", "integer", (c) => c.notNull().defaultTo(0))
      .addColumn("last_failure_message", "text", (c) => c.notNull().defaultTo(""))
      .addPrimaryKeyConstraint("subscriptions_pk", ["uid"])
      .addForeignKeyConstraint("subscriptions_group", ["group_uid"], "groups", ["uid"])
      .execute();
    await db.schema.createIndex("subscriptions_group_uid").on("subscriptions").columns(["group_uid", "uid"]).execute();
    await db.schema.createIndex("subscriptions_create_time").on("subscriptions").columns(["create_time", "uid"]).execute();
    await db.schema.createIndex("subscriptions_sink").on("subscriptions").columns(["sink", "uid"]).execute();

    await db.schema
      .createTable("events")
      .addColumn(...text("id"))
      .addColumn(...text("position"))
      .addColumn("type", "text", (c) => c.notNull())
      .addColumn(...text("subject"))
      .addColumn(...text("group_uid"))
      .addColumn("time", "bigint", (c) => c.notNull())
      .addColumn("actor", "text", (c) => c.notNull())
      .addColumn("body", "text", (c) => c.notNull())
      .addPrimaryKeyConstraint("events_pk", ["id"])
      .execute();
    await db.schema.createIndex("events_position").unique().on("events").columns(["position"]).execute();

    await db.schema
      .createTable("event_deliveries")
      .addColumn(...text("subscription_uid"))
      .addColumn(...text("event_id"))
      .addColumn(...text("position"))
      .addColumn("state", "text", (c) => c.notNull())
      .addColumn("attempts", "integer", (c) => c.notNull())
      .addColumn("first_failure_time", "bigint")
      .addColumn("next_attempt_time", "bigint", (c) => c.notNull())
      .addColumn("lease_until", "bigint", (c) => c.notNull())
      .addPrimaryKeyConstraint("event_deliveries_pk", ["subscription_uid", "event_id"])
      .addForeignKeyConstraint("event_deliveries_event", ["event_id"], "events", ["id"])
      .execute();
    await db.schema.createIndex("event_deliveries_order").on("event_deliveries").columns(["state", "subscription_uid", "position"]).execute();
  },
};
