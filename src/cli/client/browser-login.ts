import { CommandError } from "../../command/options.js";
import type { Session } from "./credentials.js";
import { listenForCallback } from "./loopback-callback.js";
import { openBrowser } from "./open-browser.js";
import { createPkce, randomState } from "./pkce.js";
import { requestToken } from "./token-endpoint.js";

/**
 * Signs in through a browser (authorization code with PKCE, loopback redirect): prints the
 * URL of GET /auth/v1/login on stderr and opens it, waits up to `timeoutMs` for the redirect to
 * 127.0.0.1, then trades the code at POST /auth/v1/token. Throws CommandError when the sign-in
 * is refused, times out, or the code is not accepted.
 */
export async function browserLogin(api: string, options: { identityProvider?: string; timeoutMs: number }): Promise<Session> {
  const { verifier, challenge } = createPkce();
  const state = randomState();
  const callback = await listenForCallback(state, options.timeoutMs);
  const query = new URLSearchParams({ redirect_uri: callback.redirectUri, code_challenge: challenge, code_challenge_method: "S256", state });
  if (options.identityProvider) query.set("identity_provider", options.identityProvider);
  const url = `${api}/auth/v1/login?${query}`;
  process.stderr.write(`Open this URL to sign in: ${url}\n`);
  openBrowser(url);
  const code = await callback.code;
  const answer = await requestToken(api, { grant_type: "authorization_code", code, code_verifier: verifier, redirect_uri: callback.redirectUri });
  if ("error" in answer) throw new CommandError(`sign-in not completed: ${answer.description}`);
  return answer.session;
}
