import { CommandError } from "../../command/options.js";
import { notSignedIn } from "./api-url.js";
import { readCredentials, updateCredentials, type Session } from "./credentials.js";
import { call, errorMessageOf, form, jsonOf } from "./http.js";

/** A session whose access token expires sooner than this is refreshed before it is used. */
export const REFRESH_MARGIN_MS = 30_000;
/** The refresh happens under the credentials lock, which others break after 30 s. */
const REFRESH_TIMEOUT_MS = 20_000;

/** A call to the API as the signed-in person: `path` under the API URL; a string body (it may be sent twice). */
export type AuthorizedFetch = (path: string, init?: RequestInit & { body?: string }) => Promise<Response>;

const sessionEnded = (api: string): CommandError => new CommandError(`your session has ended: run platform-api login --api-url ${api}`);

/**
 * Calls to `api` with the stored session's access token. The token is refreshed first when it
 * expires within REFRESH_MARGIN_MS, and once after an answer of 401 (the call is then sent
 * again); a refusal of the refresh token throws CommandError "your session has ended".
 * Throws CommandError when there is no session for `api`. Answers are returned whatever their status.
 */
export async function authorizedFetch(api: string): Promise<AuthorizedFetch> {
  let session = (await readCredentials()).sessions[api];
  if (!session) throw notSignedIn(api);
  return async (path, init = {}) => {
    if (Date.parse(session.expiry) - Date.now() < REFRESH_MARGIN_MS) session = await refreshSession(api, session);
    const send = (token: string) => call(api, path, { ...init, headers: { ...(init.headers as Record<string, string>), authorization: `Bearer ${token}` } });
    const response = await send(session.token);
    if (response.status !== 401) return response;
    await response.body?.cancel();
    session = await refreshSession(api, session);
    return send(session.token);
  };
}

/**
 * A fresh session for `api` in place of `used`: holding the credentials lock, the file is read
 * again, and when another process has already replaced `used`, its session is taken as it is
 * (unless that one expires soon too); otherwise the refresh token is exchanged at
 * POST /sts/exchange_refresh_token and the rotated pair stored before the lock is released.
 */
export async function refreshSession(api: string, used: Session): Promise<Session> {
  let fresh: Session | undefined;
  await updateCredentials(async (credentials) => {
    const stored = credentials.sessions[api];
    if (!stored) throw sessionEnded(api);
    if (stored.token !== used.token && Date.parse(stored.expiry) - Date.now() >= REFRESH_MARGIN_MS) {
      fresh = stored;
      return false;
    }
    fresh = await exchangeRefreshToken(api, stored.refreshToken);
    credentials.sessions[api] = fresh;
    return true;
  });
  return fresh!;
}

/**
 * POST /sts/exchange_refresh_token, with `aud` = `audience` when given (the access token's audience,
 * default the API's): the rotated pair as a Session. Throws CommandError when refused.
 */
export async function exchangeRefreshToken(api: string, refreshToken: string, audience?: string): Promise<Session> {
  const query = audience === undefined ? "" : `?${form({ aud: audience })}`;
  const response = await call(api, `/sts/exchange_refresh_token${query}`, { method: "POST", headers: { authorization: `Bearer ${refreshToken}` } }, REFRESH_TIMEOUT_MS);
  const body = (await jsonOf(response)) as { token?: { token?: unknown; expiry?: unknown }; refreshToken?: { token?: unknown } } | undefined;
  if (response.status === 401 || response.status === 403) throw sessionEnded(api);
  if (!response.ok) throw new CommandError(`${api}: refreshing the session: ${errorMessageOf(response, body)}`);
  const token = body?.token?.token, expiry = body?.token?.expiry, rotated = body?.refreshToken?.token;
  if (typeof token !== "string" || typeof expiry !== "string" || typeof rotated !== "string") {
    throw new CommandError(`${api}: the answer of /sts/exchange_refresh_token is not a token pair`);
  }
  return { token, expiry, refreshToken: rotated };
}
