import type { Kysely, Migration } from "kysely";
import { binaryCollation, dialectOfDb } from "../../../store/dialect.js";

/** Frozen: the advisory feeds the servers keep current (`serve --advisory-feed`), one row per URL: validators, cursor, outcome, lease. */
export const advisoryFeeds: Migration = {
  async up(db: Kysely<any>) {
    const binary = binaryCollation(dialectOfDb(db));
    let table = db.schema.createTable("advisory_feeds").addColumn("url", "text", (c) => c.notNull().modifyEnd(binary));
    for (const name of ["etag", "last_modified", "cursor", "last_error", "lease_holder"]) table = table.addColumn(name, "text", (c) => c.notNull().defaultTo(""));
    for (const name of ["next_attempt_time", "last_attempt_time", "last_success_time", "lease_until"]) table = table.addColumn(name, "bigint", (c) => c.notNull().defaultTo(0));
    for (const name of ["failures", "records_read", "records_added", "records_updated", "records_unchanged", "records_rejected"]) table = table.addColumn(name, "integer", (c) => c.notNull().defaultTo(0));
    await table.addPrimaryKeyConstraint("advisory_feeds_pk", ["url"]).execute();
  },
};
