/** The auth domain's tables: logins in progress, refresh tokens and registry passwords; column conventions in src/store/tables.ts. */

/**
 * A login in progress, from its start to the one-time platform code (browser) or the device
 * grant (terminal) it ends in. Secrets handed to a client (the code, the device code) are kept as
 * SHA-256 hashes; the identity provider's state as a hash too.
 */
export interface LoginTable {
  uid: string;
  /** "browser" (authorization code to a loopback or allowed redirect) or "device" (RFC 8628). */
  kind: string;
  /** The organization's IdentityProvider uid; "" for the server-wide provider. */
  provider_uid: string;
  /** "started" (device code issued), "redirected" (sent to the provider), "signed_in", "denied", "redeemed". */
  status: string;
  /** Hash of the `state` sent to the provider; "" before the redirect. */
  state_hash: string;
  nonce: string;
  /** The PKCE verifier of the request to the provider (ours, not the client's). */
  upstream_verifier: string;
  /** Browser: where the client wants its code, its own state and PKCE challenge. */
  redirect_uri: string;
  client_state: string;
  code_challenge: string;
  /** Browser, once signed in: hash of the one-time platform code. */
  code_hash: string;
  /** Device: hash of the device code and the user code shown to the person. */
  device_code_hash: string;
  user_code: string;
  /** Device: seconds between polls, and the last poll (ms). */
  poll_interval: number;
  last_poll_time: number;
  /** Once signed in: the identity and the person claim (JSON) the platform tokens will carry. */
  identity_uid: string;
  person: string;
  /** Once signed in: the provider's refresh token, sealed (src/store/secret-box.ts); "" when it issued none. */
  upstream_refresh_token: string;
  /** Why the login failed ("denied"), for the client. */
  error: string;
  /** Device: the address the terminal asked from (its connection's peer), to bound its pending logins; "" for a browser login. */
  client_address: string;
  create_time: number;
  expire_time: number;
}

/**
 * A refresh token (only its hash). Each use spends it and issues the next of its family; using a
 * spent one revokes the whole family (the token was stolen, or replayed).
 */
export interface RefreshTokenTable {
  token_hash: string;
  family: string;
  identity_uid: string;
  /** The person claim (JSON) of the access tokens it yields. */
  person: string;
  /**
   * The provider's refresh token, sealed (src/store/secret-box.ts), that the next refresh asks the
   * provider with; "" when the provider issued none, and once this token is spent (the next holds it).
   */
  upstream_refresh_token: string;
  create_time: number;
  expire_time: number;
  /** No token of the family outlives this. */
  family_expire_time: number;
  used_time: number | null;
  revoked_time: number | null;
}

/**
 * A person's registry password: Basic credentials the registry host's `/token` accepts for the
 * person's identity. Only `HMAC-SHA256(salt, secret)` is kept; the secret is shown once.
 */
export interface RegistryPasswordTable {
  /** 16 hex digits, named in the password itself (`prp_<id>_<secret>`) and by `revoke`. */
  id: string;
  identity_uid: string;
  description: string;
  /** 16 random bytes, hex: the HMAC key of this row's secret. */
  salt: string;
  /** HMAC-SHA256 of the secret under `salt`, hex. */
  secret_hash: string;
  create_time: number;
  /** Null: it never expires. */
  expire_time: number | null;
  /** The last `/token` it was accepted at (best effort); null before its first use. */
  last_used_time: number | null;
}

export interface AuthTables {
  logins: LoginTable;
  refresh_tokens: RefreshTokenTable;
  registry_passwords: RegistryPasswordTable;
}
