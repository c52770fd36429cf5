import type { Kysely, Transaction } from "kysely";
import type { EventsTables } from "../domains/events/tables.js";
import type { IamTables } from "../domains/iam/tables.js";
import type { LibrariesTables } from "../domains/libraries/tables.js";
import type { RegistryTables } from "../domains/registry/tables.js";
import type { ReportTables } from "../domains/registry/report-tables.js";
import type { VulnerabilitiesTables } from "../domains/vulnerabilities/tables.js";

/**
 * Table types. Times are integer epoch milliseconds and booleans 0/1, so rows
 * read back the same on SQLite and PostgreSQL. Uid and name columns use
 * byte-order collation, which the uidp prefix ranges rely on.
 */

export interface SigningKeyTable {
  kid: string;
  algorithm: string;
  /** JSON text of the private JWK. */
  private_jwk: string;
  /** JSON text of the public JWK. */
  public_jwk: string;
  create_time: number;
  /** When the key starts signing (epoch ms); before that it only verifies (it is published). */
  activate_time: number;
}

export interface ServerSecretTable {
  name: string;
  /** base64url. */
  value: string;
  create_time: number;
}

/** The server's own tables, beside every domain's. */
export interface SystemTables {
  signing_keys: SigningKeyTable;
  server_secrets: ServerSecretTable;
}

/** Every table: the server's own and each domain's (a new domain with tables adds its interface here). */
export interface Database extends SystemTables, IamTables, RegistryTables, VulnerabilitiesTables, LibrariesTables, EventsTables, ReportTables {}

/** Repositories take either the database or an open transaction. */
export type Db = Kysely<Database> | Transaction<Database>;
