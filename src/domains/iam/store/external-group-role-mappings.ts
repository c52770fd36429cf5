import type { Selectable } from "kysely";
import { keyTaken } from "../../../store/errors.js";
import type { Page } from "../../../aip/pagination.js";
import type { ListScope } from "../../kit/list-query.js";
import { deleteByUid, getByUid, listPage, resourceTable, TIMES_ORDERABLE, unlessTaken, updateByUid } from "../../kit/resource-table.js";
import type { Db } from "../../kit/schema.js";
import type { ExternalGroupRoleMappingTable } from "../tables.js";
import { getIdentityProvider } from "./identity-providers.js";

export type ExternalGroupRoleMappingRow = Selectable<ExternalGroupRoleMappingTable>;

/** Sortable mapping fields: API name to column. */
export const externalGroupRoleMappingOrderable = {
  external_group_id: "external_group",
  ...TIMES_ORDERABLE,
};

/** A mapping sits under its provider, itself under the group: two segments below the group. */
const MAPPINGS = resourceTable("external_group_role_mappings", "external group role mapping", { parent: "identity_provider_uid", ownerSegments: 2 });

export interface ExternalGroupRoleMappingFilter extends ListScope {
  externalGroup?: string;
  identityProviderUid?: string;
}

/** Throws NOT_FOUND when the mapping does not exist. */
export function getExternalGroupRoleMapping(db: Db, uid: string): Promise<ExternalGroupRoleMappingRow> {
  return getByUid(db, MAPPINGS, uid);
}

/** One page (up to `limit + 1` rows, in `page.order`) and the count of all matches. */
export function listExternalGroupRoleMappings(
  db: Db,
  filter: ExternalGroupRoleMappingFilter,
  page: Page,
): Promise<{ rows: ExternalGroupRoleMappingRow[]; total: number }> {
  const equals = { external_group: filter.externalGroup, identity_provider_uid: filter.identityProviderUid };
  return listPage(db, MAPPINGS, { equals, uidp: filter.uidp, visible: filter.visible }, page);
}

function duplicate(row: { identity_provider_uid: string; external_group: string }) {
  return keyTaken(
    "external group role mapping",
    row.external_group,
    `${row.identity_provider_uid} already maps "${row.external_group}" to this role`,
  );
}

/** Inserts a mapping; NOT_FOUND without its provider, ALREADY_EXISTS for the same group and role twice. */
export async function insertExternalGroupRoleMapping(db: Db, row: ExternalGroupRoleMappingRow): Promise<ExternalGroupRoleMappingRow> {
  await getIdentityProvider(db, row.identity_provider_uid);
  await unlessTaken(() => db.insertInto("external_group_role_mappings").values(row).execute(), () => duplicate(row));
  return row;
}

export type ExternalGroupRoleMappingChange = Pick<ExternalGroupRoleMappingRow, "external_group" | "role_uid" | "update_time">;

export function updateExternalGroupRoleMapping(db: Db, uid: string, change: ExternalGroupRoleMappingChange): Promise<ExternalGroupRoleMappingRow> {
  return unlessTaken(
    () => updateByUid(db, MAPPINGS, uid, change),
    () => duplicate({ identity_provider_uid: uid.slice(0, uid.lastIndexOf("/")), external_group: change.external_group }),
  );
}

export function deleteExternalGroupRoleMapping(db: Db, uid: string): Promise<void> {
  return deleteByUid(db, MAPPINGS, uid);
}
