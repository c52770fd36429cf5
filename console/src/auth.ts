/**
 * The console's session: the server's browser login (GET /auth/v1/login with PKCE and a state,
 * back here with a one-time code redeemed at POST /auth/v1/token), kept in this tab's
 * sessionStorage, the access token renewed with the refresh token before it expires
 * (POST /sts/exchange_refresh_token). These are the login's OAuth routes, not API calls: the API
 * is reached through its RPCs only (api.ts).
 */

export interface Session {
  token: string;
  /** ISO 8601. */
  expiry: string;
  refreshToken: string;
}

const SESSION = "platform-console.session";
const PENDING = "platform-console.pending-login";
const REDIRECT = `${location.origin}/console/`;

const base64url = (bytes: Uint8Array) => btoa(String.fromCharCode(...bytes)).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
const random = () => base64url(crypto.getRandomValues(new Uint8Array(32)));

export function currentSession(): Session | undefined {
  const stored = sessionStorage.getItem(SESSION);
  return stored ? (JSON.parse(stored) as Session) : undefined;
}

function keep(session: Session | undefined): void {
  if (session) sessionStorage.setItem(SESSION, JSON.stringify(session));
  else sessionStorage.removeItem(SESSION);
}

/** Goes to the provider; comes back to the page the person was on. */
export async function signIn(): Promise<void> {
  const verifier = random();
  const state = random();
  const challenge = base64url(new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(verifier))));
  sessionStorage.setItem(PENDING, JSON.stringify({ verifier, state, returnTo: location.hash }));
  const query = new URLSearchParams({ redirect_uri: REDIRECT, code_challenge: challenge, code_challenge_method: "S256", state });
  location.assign(`/auth/v1/login?${query}`);
}

/** After the provider: redeems the code in the address, if any. Throws with the login's own message when it failed. */
export async function completeSignIn(): Promise<void> {
  const params = new URLSearchParams(location.search);
  if (!params.has("code") && !params.has("error")) return;
  const pending = JSON.parse(sessionStorage.getItem(PENDING) ?? "null") as { verifier: string; state: string; returnTo: string } | null;
  sessionStorage.removeItem(PENDING);
  history.replaceState(null, "", `${REDIRECT}${pending?.returnTo ?? ""}`);
  if (params.has("error")) throw new Error(params.get("error_description") ?? "the sign-in was refused");
  if (!pending || params.get("state") !== pending.state) throw new Error("this sign-in was not started here; sign in again");
  const answer = await fetch("/auth/v1/token", {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({ grant_type: "authorization_code", code: params.get("code")!, code_verifier: pending.verifier, redirect_uri: REDIRECT }),
  });
  const body = (await answer.json()) as Session & { error_description?: string };
  if (!answer.ok) throw new Error(body.error_description ?? "the sign-in failed");
  keep({ token: body.token, expiry: body.expiry, refreshToken: body.refreshToken });
}

/** A valid access token, renewed when it expires within 30 s; undefined when the session has ended. */
export async function accessToken(): Promise<string | undefined> {
  const session = currentSession();
  if (!session) return undefined;
  if (Date.parse(session.expiry) - Date.now() > 30_000) return session.token;
  const answer = await fetch("/sts/exchange_refresh_token", { method: "POST", headers: { authorization: `Bearer ${session.refreshToken}` } });
  if (!answer.ok) {
    keep(undefined);
    return undefined;
  }
  const pair = (await answer.json()) as { token: { token: string; expiry: string }; refreshToken: { token: string } };
  keep({ token: pair.token.token, expiry: pair.token.expiry, refreshToken: pair.refreshToken.token });
  return pair.token.token;
}

export async function signOut(): Promise<void> {
  const session = currentSession();
  keep(undefined);
  if (session) await fetch("/auth/v1/revoke", { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded" }, body: new URLSearchParams({ token: session.refreshToken }) }).catch(() => undefined);
}
