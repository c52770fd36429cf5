import type { Migration } from "kysely";
import { iamInitial } from "./migrations/2026-11-22-0001-initial.js";
import { groupChildOrderIndexes } from "./migrations/2026-11-22-0002-group-child-order-indexes.js";
import { iamExtras } from "./migrations/2026-11-22-0003-iam-extras.js";
import { hostedCapabilityNames } from "./migrations/2026-11-24-0008-hosted-capability-names.js";
import { accountAssociationClouds } from "./migrations/2026-11-24-0009-account-association-clouds.js";
import { grantsClock } from "./migrations/2026-11-27-0080-grants-clock.js";
import { iamUpdateTimes } from "./migrations/2026-11-27-0120-iam-update-times.js";
import { identityProviderSecrets } from "./migrations/2026-11-29-0010-identity-provider-secrets.js";
import { managedBindings } from "./migrations/2026-11-29-0020-managed-bindings.js";
import { pullTokens } from "./migrations/2026-12-01-0020-pull-tokens.js";

/**
 * The iam domain's frozen migrations by name (its `Domain` value's `migrations`), imported by
 * the composition root's migration list without loading the domain's services.
 */
export const iamMigrations: Record<string, Migration> = {
  "2026-11-22-0001-initial": iamInitial,
  "2026-11-22-0002-group-child-order-indexes": groupChildOrderIndexes,
  "2026-11-22-0003-iam-extras": iamExtras,
  "2026-11-24-0008-hosted-capability-names": hostedCapabilityNames,
  "2026-11-24-0009-account-association-clouds": accountAssociationClouds,
  "2026-11-27-0080-grants-clock": grantsClock,
  "2026-11-27-0120-iam-update-times": iamUpdateTimes,
  "2026-11-29-0010-identity-provider-secrets": identityProviderSecrets,
  "2026-11-29-0020-managed-bindings": managedBindings,
  "2026-12-01-0020-pull-tokens": pullTokens,
};
