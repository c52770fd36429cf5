import { apiUrlOf } from "./api-url.js";
import { authorizedFetch } from "./authorized-fetch.js";
import { readCredentials, updateCredentials } from "./credentials.js";
import { call, form, okJson } from "./http.js";

/** How long logout waits for the API to revoke the refresh token before forgetting it anyway. */
const REVOKE_TIMEOUT_MS = 10_000;

/** `platform-api whoami`: GET /auth/v1/ok; prints the WhoAmI JSON, indented, on stdout. */
export async function whoami(apiUrlOption: string | boolean | undefined): Promise<void> {
  const api = await apiUrlOf(apiUrlOption);
  const authorized = await authorizedFetch(api);
  process.stdout.write(`${JSON.stringify(await okJson(api, await authorized("/auth/v1/ok")), null, 2)}\n`);
}

/** `platform-api invite accept <code>`: POST /auth/v1/register; prints the answer ({identity, group}), indented, on stdout. */
export async function acceptInvite(apiUrlOption: string | boolean | undefined, code: string): Promise<void> {
  const api = await apiUrlOf(apiUrlOption);
  const authorized = await authorizedFetch(api);
  const response = await authorized("/auth/v1/register", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ code }) });
  process.stdout.write(`${JSON.stringify(await okJson(api, response), null, 2)}\n`);
}

/**
 * `platform-api logout`: asks POST /auth/v1/revoke to revoke the refresh token (any failure
 * ignored), then removes the session from the file. Without a session, says so; never fails for it.
 */
export async function logout(apiUrlOption: string | boolean | undefined): Promise<void> {
  const api = await apiUrlOf(apiUrlOption);
  const session = (await readCredentials()).sessions[api];
  if (!session) return void process.stderr.write(`Not signed in to ${api}\n`);
  await call(api, "/auth/v1/revoke", { method: "POST", body: form({ token: session.refreshToken }) }, REVOKE_TIMEOUT_MS)
    .then((response) => response.body?.cancel())
    .catch(() => undefined);
  await updateCredentials((credentials) => {
    delete credentials.sessions[api];
    if (credentials.current === api) delete credentials.current;
    return true;
  });
  process.stderr.write(`Signed out of ${api}\n`);
}
