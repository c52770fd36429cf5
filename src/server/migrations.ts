import type { Migration } from "kysely";
import { initial } from "../store/migrations/2026-11-22-0001-initial.js";
import { signingKeyActivation } from "../store/migrations/2026-11-26-0070-signing-key-activation.js";
import { jobLeases } from "../store/migrations/2026-12-04-0010-job-leases.js";
import { authMigrations } from "../domains/auth/migrations.js";
import { eventsMigrations } from "../domains/events/migrations.js";
import { iamMigrations } from "../domains/iam/migrations.js";
import { librariesMigrations } from "../domains/libraries/migrations.js";
import { registryMigrations } from "../domains/registry/migrations.js";
import { vulnerabilitiesMigrations } from "../domains/vulnerabilities/migrations.js";

/** The store's own migrations (its keys and secrets, the jobs' leases). */
const STORE_MIGRATIONS: Record<string, Migration> = {
  "2026-11-22-0001-initial": initial,
  "2026-11-26-0070-signing-key-activation": signingKeyActivation,
  "2026-12-04-0010-job-leases": jobLeases,
};

/**
 * Each domain's migrations, from its light list (`src/domains/<d>/migrations.ts`, which loads no
 * service): the same objects as the domains' `migrations` (src/server/domains.ts checks that each
 * is here). A new domain with migrations adds its list here.
 */
const DOMAIN_MIGRATIONS: readonly Record<string, Migration>[] = [iamMigrations, registryMigrations, vulnerabilitiesMigrations, librariesMigrations, eventsMigrations, authMigrations];

/**
 * Every migration: the store's and each domain's. Names are unique and sort in the order they run;
 * a shipped one is never edited. The one name the store and a domain both declare (the first,
 * whose tables went to IAM) runs the domain's part, then the store's, as one migration.
 */
export const MIGRATIONS: Record<string, Migration> = mergeMigrations(STORE_MIGRATIONS, DOMAIN_MIGRATIONS);

function mergeMigrations(store: Record<string, Migration>, domains: readonly Record<string, Migration>[]): Record<string, Migration> {
  const all: Record<string, Migration> = {};
  for (const set of domains) {
    for (const [name, migration] of Object.entries(set)) {
      if (name in all) throw new Error(`migration ${name} is declared twice`);
      all[name] = migration;
    }
  }
  for (const [name, migration] of Object.entries(store)) {
    const domainPart = all[name];
    all[name] = domainPart === undefined ? migration : { up: async (db) => (await domainPart.up(db), await migration.up(db)) };
  }
  return Object.fromEntries(Object.entries(all).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}
