import { notSignedIn } from "./api-url.js";
import { exchangeRefreshToken } from "./authorized-fetch.js";
import { updateCredentials } from "./credentials.js";

/** A platform token whose audience is a registry, and when it expires (ISO 8601). */
export interface RegistryToken {
  token: string;
  expiry: string;
}

/**
 * A fresh token for `registryUrl` from the session of `api`: holding the credentials lock, the
 * session's refresh token is exchanged at POST /sts/exchange_refresh_token with `aud` = `registryUrl`
 * and the rotated one stored; the session's access token (the API's audience) stays as it is, and
 * the registry token is kept nowhere. Throws CommandError when there is no session or it has ended
 * (each saying to run `platform-api login`), or when the API refuses the audience.
 */
export async function mintRegistryToken(api: string, registryUrl: string): Promise<RegistryToken> {
  let minted: RegistryToken | undefined;
  await updateCredentials(async (credentials) => {
    const stored = credentials.sessions[api];
    if (!stored) throw notSignedIn(api);
    const pair = await exchangeRefreshToken(api, stored.refreshToken, registryUrl);
    credentials.sessions[api] = { ...stored, refreshToken: pair.refreshToken };
    minted = { token: pair.token, expiry: pair.expiry };
    return true;
  });
  return minted!;
}
