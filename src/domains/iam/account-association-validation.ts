import type { AccountAssociation } from "../../../gen/platform/iam/v2/account_association_pb.js";
import type { Violations } from "../../aip/validation.js";

/** The updatable top-level fields (AIP-134 mask paths; `google.project_id` and the like reach inside). */
export const ACCOUNT_ASSOCIATION_UPDATABLE = ["name", "description", "amazon", "google", "azure", "github"] as const;

const AMAZON_ACCOUNT = /^[0-9]{12}$/;
const GOOGLE_PROJECT_ID = /^[a-z][a-z0-9-]{4,28}[a-z0-9]$/;
const DIGITS = /^[0-9]{1,20}$/;
const UUID = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;
const CLIENT_NAME = /^[A-Za-z0-9._-]{1,64}$/;
const MAX_AZURE_CLIENTS = 32;
const MAX_GITHUB_INSTALLATIONS = 100;

/** Each cloud is optional; one that is given needs its required fields (the hosted service's rules). */
export function checkAccountAssociationFields(violations: Violations, a: AccountAssociation, prefix = "account_association."): void {
  violations.name(`${prefix}name`, a.name, { max: 128 });
  violations.description(`${prefix}description`, a.description);
  if (a.amazon) violations.text(`${prefix}amazon.account`, a.amazon.account, { required: true, max: 12, pattern: AMAZON_ACCOUNT });
  if (a.google) {
    violations.text(`${prefix}google.project_id`, a.google.projectId, { required: true, max: 30, pattern: GOOGLE_PROJECT_ID });
    violations.text(`${prefix}google.project_number`, a.google.projectNumber, { required: true, max: 20, pattern: DIGITS });
  }
  if (a.azure) {
    violations.text(`${prefix}azure.tenant_id`, a.azure.tenantId, { required: true, max: 36, pattern: UUID });
    const clients = Object.entries(a.azure.clientIds);
    if (clients.length === 0) violations.add(`${prefix}azure.client_ids`, "is required");
    if (clients.length > MAX_AZURE_CLIENTS) violations.add(`${prefix}azure.client_ids`, `must hold at most ${MAX_AZURE_CLIENTS} entries`);
    for (const [name, id] of clients) {
      const field = `${prefix}azure.client_ids[${JSON.stringify(name)}]`;
      if (!CLIENT_NAME.test(name)) violations.add(field, "the name must be 1 to 64 of A-Z a-z 0-9 . _ -");
      violations.text(field, id, { required: true, max: 36, pattern: UUID });
    }
  }
  if (a.github) checkGitHub(violations, a.github, `${prefix}github.app_installations`);
}

function checkGitHub(violations: Violations, github: NonNullable<AccountAssociation["github"]>, at: string): void {
  const seen = new Set<bigint>();
  let count = 0;
  for (const [app, { installations }] of Object.entries(github.appInstallations)) {
    const field = `${at}[${app}]`;
    if (BigInt(app) < 0n) violations.add(field, "the app id must not be negative");
    if (installations.length === 0) violations.add(`${field}.installations`, "is required");
    installations.forEach((installation, i) => {
      const where = `${field}.installations[${i}]`;
      if (installation.installationId <= 0n) violations.add(`${where}.installation_id`, "must be a positive number");
      else if (seen.has(installation.installationId)) violations.add(`${where}.installation_id`, "repeats an earlier installation");
      seen.add(installation.installationId);
      violations.text(`${where}.name`, installation.name, { max: 128 });
    });
    count += installations.length;
  }
  if (count > MAX_GITHUB_INSTALLATIONS) violations.add(at, `must hold at most ${MAX_GITHUB_INSTALLATIONS} installations`);
}
