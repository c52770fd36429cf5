import type { Kysely } from "kysely";
import type { DatabaseOptions } from "../store/dialect.js";
import { migrate as migrateStore, migrationsApplied as storeMigrationsApplied, openStore as openStoreOf, type Store as StoreOf } from "../store/store.js";
import { MIGRATIONS } from "./migrations.js";
import type { Database } from "../domains/kit/schema.js";

/** The platform's store: the database every domain shares, with every domain's migrations. */
export type Store = StoreOf<Database>;

/** Opens the database at `url` and brings its schema up to date (every domain's migrations). */
export function openStore(url: string, options: DatabaseOptions = {}): Promise<Store> {
  return openStoreOf<Database>(url, MIGRATIONS, options);
}

/** Runs the domains' pending migrations (or up to `to`, for tests of older installs). */
export function migrate(db: Kysely<Database>, to?: string): Promise<void> {
  return migrateStore(db, MIGRATIONS, to);
}

/** Whether the store holds every migration this build knows: the readiness `/readyz` reports. */
export function migrationsApplied(db: Kysely<Database>): Promise<boolean> {
  return storeMigrationsApplied(db, MIGRATIONS);
}
