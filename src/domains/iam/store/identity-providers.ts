import type { Selectable } from "kysely";
import { keyTaken, resourceNotEmpty } from "../../../store/errors.js";
import type { Page } from "../../../aip/pagination.js";
import { parentOf } from "../../../aip/uidp.js";
import type { ListScope } from "../../kit/list-query.js";
import { getByUid, listPage, resourceTable, TIMES_ORDERABLE, unlessTaken, updateByUid } from "../../kit/resource-table.js";
import type { Db } from "../../kit/schema.js";
import type { IdentityProviderTable } from "../tables.js";
import { getGroup } from "./groups.js";

export type IdentityProviderRow = Selectable<IdentityProviderTable>;

/** Sortable identity provider fields: API name to column. */
export const identityProviderOrderable = {
  name: "name",
  ...TIMES_ORDERABLE,
};

const IDENTITY_PROVIDERS = resourceTable("identity_providers", "identity provider", { parent: "group_uid", ownerSegments: 1 });

export interface IdentityProviderFilter extends ListScope {
  name?: string;
}

/** Throws NOT_FOUND when the provider does not exist. */
export function getIdentityProvider(db: Db, uid: string): Promise<IdentityProviderRow> {
  return getByUid(db, IDENTITY_PROVIDERS, uid);
}

/** One page (up to `limit + 1` rows, in `page.order`) and the count of all matches. */
export function listIdentityProviders(db: Db, { name, uidp, visible }: IdentityProviderFilter, page: Page): Promise<{ rows: IdentityProviderRow[]; total: number }> {
  return listPage(db, IDENTITY_PROVIDERS, { equals: { name }, uidp, visible }, page);
}

function nameTaken(row: { group_uid: string; name: string }) {
  return keyTaken("identity provider", row.name, `an identity provider of ${row.group_uid} is already named "${row.name}"`);
}

/** Inserts a provider; NOT_FOUND when its group does not exist, ALREADY_EXISTS when the name is taken in the group. */
export async function insertIdentityProvider(db: Db, row: IdentityProviderRow): Promise<IdentityProviderRow> {
  await getGroup(db, row.group_uid);
  await unlessTaken(() => db.insertInto("identity_providers").values(row).execute(), () => nameTaken(row));
  return row;
}

export type IdentityProviderChange = Omit<IdentityProviderRow, "uid" | "group_uid" | "create_time">;

/** Writes the changeable columns; NOT_FOUND or ALREADY_EXISTS (name taken). */
export function updateIdentityProvider(db: Db, uid: string, change: IdentityProviderChange): Promise<IdentityProviderRow> {
  return unlessTaken(
    () => updateByUid(db, IDENTITY_PROVIDERS, uid, change),
    () => nameTaken({ group_uid: parentOf(uid) ?? uid, name: change.name }),
  );
}

/** Deletes a provider without role mappings: NOT_FOUND, or FAILED_PRECONDITION / RESOURCE_NOT_EMPTY. */
export async function deleteIdentityProvider(db: Db, uid: string): Promise<void> {
  await getIdentityProvider(db, uid);
  const mapping = await db.selectFrom("external_group_role_mappings").select("uid").where("identity_provider_uid", "=", uid).limit(1).executeTakeFirst();
  if (mapping) throw resourceNotEmpty("identity provider", uid);
  await db.deleteFrom("identity_providers").where("uid", "=", uid).execute();
}
