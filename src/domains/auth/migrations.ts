import type { Migration } from "kysely";
import { logins } from "./migrations/2026-11-29-0030-logins.js";
import { loginClients } from "./migrations/2026-12-03-0040-login-clients.js";
import { upstreamRefreshTokens } from "./migrations/2026-12-03-0050-upstream-refresh-tokens.js";
import { registryPasswords } from "./migrations/2026-12-11-0010-registry-passwords.js";

/**
 * The auth domain's frozen migrations by name (its `Domain` value's `migrations`), imported by
 * the composition root's migration list without loading the domain's services.
 */
export const authMigrations: Record<string, Migration> = {
  "2026-11-29-0030-logins": logins,
  "2026-12-03-0040-login-clients": loginClients,
  "2026-12-03-0050-upstream-refresh-tokens": upstreamRefreshTokens,
  "2026-12-11-0010-registry-passwords": registryPasswords,
};
