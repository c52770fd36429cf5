import type { Migration } from "kysely";
import { artifacts } from "./migrations/2026-11-25-0013-artifacts.js";
import { artifactTrigrams } from "./migrations/2026-11-26-0020-artifact-trigrams.js";

/**
 * The libraries domain's frozen migrations by name (its `Domain` value's `migrations`), imported by
 * the composition root's migration list without loading the domain's services.
 */
export const librariesMigrations: Record<string, Migration> = {
  "2026-11-25-0013-artifacts": artifacts,
  "2026-11-26-0020-artifact-trigrams": artifactTrigrams,
};
