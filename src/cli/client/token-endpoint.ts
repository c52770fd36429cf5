import { CommandError } from "../../command/options.js";
import type { Session } from "./credentials.js";
import { call, form, jsonOf } from "./http.js";

/** What POST /auth/v1/token answered: a session, or the OAuth error code and its description. */
export type TokenAnswer = { session: Session } | { error: string; description: string };

/**
 * POST /auth/v1/token with the form `fields` (a grant, RFC 6749 / RFC 8628). Throws CommandError
 * when the API cannot be reached or answers neither a session nor an OAuth error.
 */
export async function requestToken(api: string, fields: Record<string, string>): Promise<TokenAnswer> {
  const response = await call(api, "/auth/v1/token", { method: "POST", body: form(fields) });
  const body = ((await jsonOf(response)) ?? {}) as Record<string, unknown>;
  if (response.ok && typeof body.token === "string" && typeof body.expiry === "string" && typeof body.refreshToken === "string") {
    return { session: { token: body.token, expiry: body.expiry, refreshToken: body.refreshToken } };
  }
  if (!response.ok && typeof body.error === "string") {
    return { error: body.error, description: typeof body.error_description === "string" ? body.error_description : body.error };
  }
  const said = typeof body.message === "string" ? body.message : `${response.status} ${response.statusText}`;
  throw new CommandError(`${api}: /auth/v1/token did not answer a session: ${said}`);
}
