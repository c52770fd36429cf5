import type { Selectable } from "kysely";
import { alreadyExists, notFound, resourceNotEmpty } from "../../../store/errors.js";
import type { Page } from "../../../api/pagination.js";
import { parentOf } from "../../../api/uidp.js";
import { isUniqueViolation } from "../../../store/dialect.js";
import { applyPage, countRows, listConditions, type UidColumns, type UidpFilter, type Visibility } from "../../../store/list-query.js";
import type { Db } from "../../../store/tables.js";
import type { IdentityProviderTable } from "../tables.js";
import { getGroup } from "./groups.js";

export type IdentityProviderRow = Selectable<IdentityProviderTable>;

/** Sortable identity provider fields: API name to column. */
export const identityProviderOrderable = {
  name: "name",
  create_time: "create_time",
  created_at: "create_time",
  update_time: "update_time",
  updated_at: "update_time",
};

const COLUMNS: UidColumns = { uid: "identity_providers.uid", parent: "identity_providers.group_uid", ownerSegments: 1 };

export interface IdentityProviderFilter {
  name?: string;
  uidp: UidpFilter;
  visible: Visibility;
}

/** Throws NOT_FOUND when the provider does not exist. */
export async function getIdentityProvider(db: Db, uid: string): Promise<IdentityProviderRow> {
  const row = await db.selectFrom("identity_providers").selectAll().where("uid", "=", uid).executeTakeFirst();
  if (!row) throw notFound("identity provider", uid);
  return row;
}

function filtered(db: Db, filter: IdentityProviderFilter) {
  return db.selectFrom("identity_providers").where((eb) =>
    eb.and([...(filter.name ? [eb("name", "=", filter.name)] : []), ...listConditions(eb, COLUMNS, filter.uidp, filter.visible)]),
  );
}

/** One page (up to `limit + 1` rows, in `page.order`) and the count of all matches. */
export async function listIdentityProviders(db: Db, filter: IdentityProviderFilter, page: Page): Promise<{ rows: IdentityProviderRow[]; total: number }> {
  const rows = await applyPage(filtered(db, filter).selectAll(), page, "identity_providers").execute();
  const total = await countRows(filtered(db, filter));
  return { rows, total };
}

function nameTaken(row: { group_uid: string; name: string }) {
  return alreadyExists("identity provider", row.name, `an identity provider of ${row.group_uid} is already named "${row.name}"`);
}

/** Inserts a provider; NOT_FOUND when its group does not exist, ALREADY_EXISTS when the name is taken in the group. */
export async function insertIdentityProvider(db: Db, row: IdentityProviderRow): Promise<IdentityProviderRow> {
  await getGroup(db, row.group_uid);
  try {
    await db.insertInto("identity_providers").values(row).execute();
  } catch (error) {
    if (isUniqueViolation(error)) throw nameTaken(row);
    throw error;
  }
  return row;
}

export type IdentityProviderChange = Omit<IdentityProviderRow, "uid" | "group_uid" | "create_time">;

/** Writes the changeable columns; NOT_FOUND or ALREADY_EXISTS (name taken). */
export async function updateIdentityProvider(db: Db, uid: string, change: IdentityProviderChange): Promise<IdentityProviderRow> {
  try {
    const row = await db.updateTable("identity_providers").set(change).where("uid", "=", uid).returningAll().executeTakeFirst();
    if (!row) throw notFound("identity provider", uid);
    return row;
  } catch (error) {
    if (isUniqueViolation(error)) throw nameTaken({ group_uid: parentOf(uid) ?? uid, name: change.name });
    throw error;
  }
}

/** Deletes a provider without role mappings: NOT_FOUND, or FAILED_PRECONDITION / RESOURCE_NOT_EMPTY. */
export async function deleteIdentityProvider(db: Db, uid: string): Promise<void> {
  await getIdentityProvider(db, uid);
  const mapping = await db.selectFrom("external_group_role_mappings").select("uid").where("identity_provider_uid", "=", uid).limit(1).executeTakeFirst();
  if (mapping) throw resourceNotEmpty("identity provider", uid);
  await db.deleteFrom("identity_providers").where("uid", "=", uid).execute();
}
