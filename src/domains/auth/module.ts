import { Auth, file_platform_auth_v1_auth } from "../../../gen/platform/auth/v1/auth_pb.js";
import { bind, type Domain } from "../kit/domain.js";
import { createAuthService } from "./auth-service.js";
import { logins } from "./migrations/2026-11-29-0030-logins.js";
import { loginClients } from "./migrations/2026-12-03-0040-login-clients.js";
import { upstreamRefreshTokens } from "./migrations/2026-12-03-0050-upstream-refresh-tokens.js";

/**
 * Auth (`platform.auth.v1`): who the caller is, a person's registration, and the state of people
 * signing in (logins in progress, refresh tokens) that the login routes (src/transport/auth/login/) keep here.
 */
export const auth: Domain = {
  name: "auth",
  files: [file_platform_auth_v1_auth],
  services: [bind(Auth, (deps) => createAuthService(deps))],
  migrations: { "2026-11-29-0030-logins": logins, "2026-12-03-0040-login-clients": loginClients, "2026-12-03-0050-upstream-refresh-tokens": upstreamRefreshTokens },
  ownedByGroup: [],
  deletedWithRepo: [],
};
