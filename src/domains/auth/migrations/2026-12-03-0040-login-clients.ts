import type { Kysely, Migration } from "kysely";
import { binaryCollation, dialectOfDb } from "../../../store/dialect.js";

/**
 * Frozen: a login in progress names the address of the client that started it (`client_address`,
 * "" for logins started before), so the pending device logins of one address can be counted.
 */
export const loginClients: Migration = {
  async up(db: Kysely<any>) {
    const binary = binaryCollation(dialectOfDb(db));
    await db.schema.alterTable("logins").addColumn("client_address", "text", (c) => c.notNull().defaultTo("").modifyEnd(binary)).execute();
    await db.schema.createIndex("logins_client_address").on("logins").columns(["client_address", "expire_time"]).execute();
  },
};
