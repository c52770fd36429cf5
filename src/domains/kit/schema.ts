import type { Kysely, Transaction } from "kysely";
import type { SystemTables } from "../../store/tables.js";
import type { AuthTables } from "../auth/tables.js";
import type { EventsTables } from "../events/tables.js";
import type { IamTables } from "../iam/tables.js";
import type { LibrariesTables } from "../libraries/tables.js";
import type { RegistryTables } from "../registry/tables.js";
import type { ReportTables } from "../registry/report-tables.js";
import type { TrustTables } from "../registry/trust/tables.js";
import type { VulnerabilitiesTables } from "../vulnerabilities/tables.js";

/**
 * The database the domains share: the store's own tables and each domain's (a new domain with
 * tables adds its interface here; its migrations go in its `Domain` value). Column conventions in
 * src/store/tables.ts.
 */
export interface Database extends SystemTables, IamTables, RegistryTables, VulnerabilitiesTables, LibrariesTables, EventsTables, ReportTables, AuthTables, TrustTables {}

/** Repositories take either the database or an open transaction. */
export type Db = Kysely<Database> | Transaction<Database>;
