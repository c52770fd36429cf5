import { create } from "@bufbuild/protobuf";
import { AccountAssociationSchema, type AccountAssociation } from "../../../gen/platform/iam/v2/account_association_pb.js";
import type { AccountAssociationRow, AccountAssociationChange } from "./store/account-associations.js";
import { toTimestamp } from "../../aip/time.js";

/** `github_app_installations` column: installations by app id (decimal string). */
type StoredInstallations = Record<string, Array<{ installationId: string; name: string }>>;

export function accountAssociationFromRow(row: AccountAssociationRow): AccountAssociation {
  const clientIds = JSON.parse(row.azure_client_ids) as Record<string, string>;
  const apps = JSON.parse(row.github_app_installations) as StoredInstallations;
  return create(AccountAssociationSchema, {
    uid: row.uid,
    name: row.name,
    description: row.description,
    amazon: row.amazon_account_id ? { account: row.amazon_account_id } : undefined,
    google: row.google_project_id || row.google_project_number ? { projectId: row.google_project_id, projectNumber: row.google_project_number } : undefined,
    azure: row.azure_tenant_id || Object.keys(clientIds).length > 0 ? { tenantId: row.azure_tenant_id, clientIds } : undefined,
    github:
      Object.keys(apps).length > 0
        ? {
            appInstallations: Object.fromEntries(
              Object.entries(apps).map(([app, list]) => [app, { installations: list.map((i) => ({ installationId: BigInt(i.installationId), name: i.name })) }]),
            ),
          }
        : undefined,
    createTime: toTimestamp(row.create_time),
    updateTime: toTimestamp(row.update_time),
  });
}

/** The stored columns of a checked association's writable fields. */
export function accountAssociationColumns(a: AccountAssociation, time: number): AccountAssociationChange {
  const apps: StoredInstallations = {};
  for (const [app, { installations }] of Object.entries(a.github?.appInstallations ?? {})) {
    apps[app] = installations.map((i) => ({ installationId: String(i.installationId), name: i.name }));
  }
  return {
    name: a.name,
    description: a.description,
    amazon_account_id: a.amazon?.account ?? "",
    google_project_id: a.google?.projectId ?? "",
    google_project_number: a.google?.projectNumber ?? "",
    azure_tenant_id: a.azure?.tenantId ?? "",
    azure_client_ids: JSON.stringify(a.azure?.clientIds ?? {}),
    github_app_installations: JSON.stringify(apps),
    update_time: time,
  };
}
