import type { Migration } from "kysely";
import { initial } from "./2026-11-22-0001-initial.js";
import { groupChildOrderIndexes } from "./2026-11-22-0002-group-child-order-indexes.js";
import { iamExtras } from "./2026-11-22-0003-iam-extras.js";
import { registry } from "./2026-11-22-0004-registry.js";
import { manifests } from "./2026-11-23-0005-manifests.js";
import { blobs } from "./2026-11-23-0006-blobs.js";
import { blobUseTime } from "./2026-11-24-0007-blob-use-time.js";
import { hostedCapabilityNames } from "./2026-11-24-0008-hosted-capability-names.js";
import { accountAssociationClouds } from "./2026-11-24-0009-account-association-clouds.js";

/** Every migration, by name; names sort in the order they run. Never edit one that has shipped. */
export const migrations: Record<string, Migration> = {
  "2026-11-22-0001-initial": initial,
  "2026-11-22-0002-group-child-order-indexes": groupChildOrderIndexes,
  "2026-11-22-0003-iam-extras": iamExtras,
  "2026-11-22-0004-registry": registry,
  "2026-11-23-0005-manifests": manifests,
  "2026-11-23-0006-blobs": blobs,
  "2026-11-24-0007-blob-use-time": blobUseTime,
  "2026-11-24-0008-hosted-capability-names": hostedCapabilityNames,
  "2026-11-24-0009-account-association-clouds": accountAssociationClouds,
};
