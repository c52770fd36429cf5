import type { Selectable } from "kysely";
import { alreadyExists, notFound } from "../../../store/errors.js";
import type { Page } from "../../../api/pagination.js";
import { isUniqueViolation } from "../../../store/dialect.js";
import { applyPage, countRows, listConditions, type UidColumns, type UidpFilter, type Visibility } from "../../../store/list-query.js";
import type { Db } from "../../../store/tables.js";
import type { ExternalGroupRoleMappingTable } from "../tables.js";
import { getIdentityProvider } from "./identity-providers.js";

export type ExternalGroupRoleMappingRow = Selectable<ExternalGroupRoleMappingTable>;

/** Sortable mapping fields: API name to column. */
export const externalGroupRoleMappingOrderable = {
  external_group_id: "external_group",
  create_time: "create_time",
  created_at: "create_time",
  update_time: "update_time",
  updated_at: "update_time",
};

/** A mapping sits under its provider, itself under the group: two segments below the group. */
const COLUMNS: UidColumns = {
  uid: "external_group_role_mappings.uid",
  parent: "external_group_role_mappings.identity_provider_uid",
  ownerSegments: 2,
};

export interface ExternalGroupRoleMappingFilter {
  externalGroup?: string;
  identityProviderUid?: string;
  uidp: UidpFilter;
  visible: Visibility;
}

/** Throws NOT_FOUND when the mapping does not exist. */
export async function getExternalGroupRoleMapping(db: Db, uid: string): Promise<ExternalGroupRoleMappingRow> {
  const row = await db.selectFrom("external_group_role_mappings").selectAll().where("uid", "=", uid).executeTakeFirst();
  if (!row) throw notFound("external group role mapping", uid);
  return row;
}

function filtered(db: Db, filter: ExternalGroupRoleMappingFilter) {
  return db.selectFrom("external_group_role_mappings").where((eb) =>
    eb.and([
      ...(filter.externalGroup ? [eb("external_group", "=", filter.externalGroup)] : []),
      ...(filter.identityProviderUid ? [eb("identity_provider_uid", "=", filter.identityProviderUid)] : []),
      ...listConditions(eb, COLUMNS, filter.uidp, filter.visible),
    ]),
  );
}

/** One page (up to `limit + 1` rows, in `page.order`) and the count of all matches. */
export async function listExternalGroupRoleMappings(
  db: Db,
  filter: ExternalGroupRoleMappingFilter,
  page: Page,
): Promise<{ rows: ExternalGroupRoleMappingRow[]; total: number }> {
  const rows = await applyPage(filtered(db, filter).selectAll(), page, "external_group_role_mappings").execute();
  const total = await countRows(filtered(db, filter));
  return { rows, total };
}

function duplicate(row: { identity_provider_uid: string; external_group: string }) {
  return alreadyExists(
    "external group role mapping",
    row.external_group,
    `${row.identity_provider_uid} already maps "${row.external_group}" to this role`,
  );
}

/** Inserts a mapping; NOT_FOUND without its provider, ALREADY_EXISTS for the same group and role twice. */
export async function insertExternalGroupRoleMapping(db: Db, row: ExternalGroupRoleMappingRow): Promise<ExternalGroupRoleMappingRow> {
  await getIdentityProvider(db, row.identity_provider_uid);
  try {
    await db.insertInto("external_group_role_mappings").values(row).execute();
  } catch (error) {
    if (isUniqueViolation(error)) throw duplicate(row);
    throw error;
  }
  return row;
}

export type ExternalGroupRoleMappingChange = Pick<ExternalGroupRoleMappingRow, "external_group" | "role_uid" | "update_time">;

export async function updateExternalGroupRoleMapping(db: Db, uid: string, change: ExternalGroupRoleMappingChange): Promise<ExternalGroupRoleMappingRow> {
  try {
    const row = await db.updateTable("external_group_role_mappings").set(change).where("uid", "=", uid).returningAll().executeTakeFirst();
    if (!row) throw notFound("external group role mapping", uid);
    return row;
  } catch (error) {
    if (isUniqueViolation(error)) throw duplicate({ identity_provider_uid: uid.slice(0, uid.lastIndexOf("/")), external_group: change.external_group });
    throw error;
  }
}

export async function deleteExternalGroupRoleMapping(db: Db, uid: string): Promise<void> {
  const { numDeletedRows } = await db.deleteFrom("external_group_role_mappings").where("uid", "=", uid).executeTakeFirst();
  if (numDeletedRows === 0n) throw notFound("external group role mapping", uid);
}
