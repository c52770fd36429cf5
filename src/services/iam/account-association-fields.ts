import { create } from "@bufbuild/protobuf";
import { AccountAssociationSchema, type AccountAssociation } from "../../../gen/platform/iam/v2/account_association_pb.js";
import type { Violations } from "../../api/validation.js";
import type { AccountAssociationRow, AccountAssociationChange } from "../../store/repositories/account-associations.js";
import { toTimestamp } from "../time.js";

/** The updatable fields (AIP-134 mask paths). */
export const ACCOUNT_ASSOCIATION_UPDATABLE = [
  "name",
  "description",
  "amazon_account_id",
  "google_project_id",
  "google_project_number",
  "azure_tenant_id",
  "azure_client_id",
  "github_installation_ids",
] as const;

const AMAZON_ACCOUNT = /^[0-9]{12}$/;
const GOOGLE_PROJECT_ID = /^[a-z][a-z0-9-]{4,28}[a-z0-9]$/;
const DIGITS = /^[0-9]{1,20}$/;
const UUID = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;

export function accountAssociationFromRow(row: AccountAssociationRow): AccountAssociation {
  return create(AccountAssociationSchema, {
    uid: row.uid,
    name: row.name,
    description: row.description,
    amazonAccountId: row.amazon_account_id,
    googleProjectId: row.google_project_id,
    googleProjectNumber: row.google_project_number,
    azureTenantId: row.azure_tenant_id,
    azureClientId: row.azure_client_id,
    githubInstallationIds: JSON.parse(row.github_installation_ids) as string[],
    createTime: toTimestamp(row.create_time),
    updateTime: toTimestamp(row.update_time),
  });
}

/** The stored columns of an association's writable fields. */
export function accountAssociationColumns(a: AccountAssociation, time: number): AccountAssociationChange {
  return {
    name: a.name,
    description: a.description,
    amazon_account_id: a.amazonAccountId,
    google_project_id: a.googleProjectId,
    google_project_number: a.googleProjectNumber,
    azure_tenant_id: a.azureTenantId,
    azure_client_id: a.azureClientId,
    github_installation_ids: JSON.stringify(a.githubInstallationIds),
    update_time: time,
  };
}

export function checkAccountAssociationFields(violations: Violations, a: AccountAssociation, prefix = "account_association."): void {
  violations.text(`${prefix}name`, a.name, { max: 128 });
  violations.text(`${prefix}description`, a.description, { max: 1024 });
  violations.text(`${prefix}amazon_account_id`, a.amazonAccountId, { max: 12, pattern: AMAZON_ACCOUNT });
  violations.text(`${prefix}google_project_id`, a.googleProjectId, { max: 30, pattern: GOOGLE_PROJECT_ID });
  violations.text(`${prefix}google_project_number`, a.googleProjectNumber, { max: 20, pattern: DIGITS });
  violations.text(`${prefix}azure_tenant_id`, a.azureTenantId, { max: 36, pattern: UUID });
  violations.text(`${prefix}azure_client_id`, a.azureClientId, { max: 36, pattern: UUID });
  const ids = a.githubInstallationIds;
  if (ids.length > 100) violations.add(`${prefix}github_installation_ids`, "must hold at most 100 ids");
  ids.forEach((id, i) => {
    violations.text(`${prefix}github_installation_ids[${i}]`, id, { required: true, max: 20, pattern: DIGITS });
    if (ids.indexOf(id) !== i) violations.add(`${prefix}github_installation_ids[${i}]`, "repeats an earlier id");
  });
}
