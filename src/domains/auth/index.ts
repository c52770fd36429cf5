/**
 * The auth domain's face: the login routes (src/transport/auth/login/) keep logins in progress and refresh
 * tokens through these operations; the registry password routes and the registry host's `/token` make,
 * list, revoke and accept a person's registry passwords. Everything else under `src/domains/auth/` is private to it.
 */
export {
  CODE_TTL_MS,
  createDeviceLoginStarter,
  deviceLoginOf,
  failLogin,
  finishLogin,
  LOGIN_TTL_MS,
  pollDeviceLogin,
  redeemLoginCode,
  redirectDeviceLogin,
  startBrowserLogin,
  takeReturningLogin,
  type DeviceAuthorization,
  type DeviceLoginRefused,
  type Grant,
  type GrantError,
  type PendingDeviceLimits,
  type ReturningLogin,
  type UpstreamRequest,
} from "./logins.js";
export { heldRefreshToken, revokeRefreshToken, rotateRefreshToken, startRefreshFamily, type IssuedRefreshToken, type RefreshLifetimes, type Rotation, type SignedIn } from "./refresh.js";
export {
  acceptRegistryPassword,
  createRegistryPassword,
  isRegistryPassword,
  listRegistryPasswords,
  registryPasswordLive,
  MAX_REGISTRY_PASSWORD_DESCRIPTION,
  MAX_REGISTRY_PASSWORD_TTL_MS,
  MAX_REGISTRY_PASSWORDS,
  MIN_REGISTRY_PASSWORD_TTL_MS,
  revokeRegistryPassword,
  type AcceptedRegistryPassword,
  type RegistryPassword,
  type RegistryPasswordMade,
} from "./registry-passwords.js";
