import type { Selectable } from "kysely";
import { keyTaken, resourceNotEmpty } from "../../../store/errors.js";
import { parentOf } from "../../../aip/uidp.js";
import { NAMED_ORDERABLE, namedResourceReads, resourceTable, unlessTaken, updateByUid } from "../../kit/resource-table.js";
import type { Db } from "../../kit/schema.js";
import type { IdentityProviderTable } from "../tables.js";
import { getGroup } from "./groups.js";

export type IdentityProviderRow = Selectable<IdentityProviderTable>;

/** Sortable identity provider fields: API name to column. */
export const identityProviderOrderable = NAMED_ORDERABLE;

const IDENTITY_PROVIDERS = resourceTable("identity_providers", "identity provider", { parent: "group_uid", ownerSegments: 1 });

/** `getIdentityProvider` throws NOT_FOUND when the provider does not exist; `listIdentityProviders` lists by exact name (`namedResourceReads`). */
export const { get: getIdentityProvider, list: listIdentityProviders } = namedResourceReads(IDENTITY_PROVIDERS);

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
