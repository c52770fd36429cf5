import type { Migration } from "kysely";
import { advisories } from "./migrations/2026-11-24-0010-advisories.js";
import { advisoryEtags } from "./migrations/2026-11-26-0090-advisory-etags.js";
import { advisoryFeeds } from "./migrations/2026-11-30-0010-advisory-feeds.js";
import { feedLeasesMoved } from "./migrations/2026-12-04-0030-feed-leases-moved.js";

/**
 * The vulnerabilities domain's frozen migrations by name (its `Domain` value's `migrations`), imported by
 * the composition root's migration list without loading the domain's services.
 */
export const vulnerabilitiesMigrations: Record<string, Migration> = {
  "2026-11-24-0010-advisories": advisories,
  "2026-11-26-0090-advisory-etags": advisoryEtags,
  "2026-11-30-0010-advisory-feeds": advisoryFeeds,
  "2026-12-04-0030-feed-leases-moved": feedLeasesMoved,
};
