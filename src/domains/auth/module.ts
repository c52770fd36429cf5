import { Auth, file_platform_auth_v1_auth } from "../../../gen/platform/auth/v1/auth_pb.js";
import { bind, type Domain } from "../kit/domain.js";
import { createAuthService } from "./auth-service.js";
import { authMigrations } from "./migrations.js";

/**
 * Auth (`platform.auth.v1`): who the caller is, a person's registration, and the state of people
 * signing in (logins in progress, refresh tokens) that the login routes (src/transport/auth/login/) keep here.
 */
export const auth: Domain = {
  name: "auth",
  files: [file_platform_auth_v1_auth],
  services: [bind(Auth, (deps) => createAuthService(deps))],
  migrations: authMigrations,
  ownedByGroup: [],
  deletedWithRepo: [],
};
