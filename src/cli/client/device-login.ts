import { setTimeout as sleep } from "node:timers/promises";
import { CommandError } from "../../command/options.js";
import type { Session } from "./credentials.js";
import { call, form, okJson } from "./http.js";
import { requestToken } from "./token-endpoint.js";

const DEVICE_GRANT = "urn:ietf:params:oauth:grant-type:device_code";

interface DeviceAuthorization {
  device_code: string;
  user_code: string;
  verification_uri_complete: string;
  expires_in: number;
  interval: number;
}

/**
 * Signs in without a browser on this machine (RFC 8628): asks POST /auth/v1/device/code for a
 * code, prints where to confirm it on stderr, then polls POST /auth/v1/token every `interval`
 * seconds (5 more after each slow_down) until a session comes, within `expires_in` and
 * `timeoutMs`. Throws CommandError when the person refuses, the code expires, or the API errs.
 */
export async function deviceLogin(api: string, options: { identityProvider?: string; timeoutMs: number }): Promise<Session> {
  const response = await call(api, "/auth/v1/device/code", { method: "POST", body: form({ identity_provider: options.identityProvider }) });
  const device = (await okJson(api, response)) as DeviceAuthorization;
  if (typeof device.device_code !== "string" || typeof device.user_code !== "string" || typeof device.verification_uri_complete !== "string") {
    throw new CommandError(`${api}: the answer of /auth/v1/device/code is not a device authorization`);
  }
  process.stderr.write(`Open ${device.verification_uri_complete} and confirm the code ${device.user_code}\n`);
  const deadline = Date.now() + Math.min(Number(device.expires_in) * 1000 || options.timeoutMs, options.timeoutMs);
  let intervalMs = (Number(device.interval) || 5) * 1000;
  for (;;) {
    if (Date.now() + intervalMs > deadline) throw new CommandError("the code was not confirmed in time; run platform-api login again");
    await sleep(intervalMs);
    const answer = await requestToken(api, { grant_type: DEVICE_GRANT, device_code: device.device_code });
    if ("session" in answer) return answer.session;
    if (answer.error === "authorization_pending") continue;
    if (answer.error === "slow_down") intervalMs += 5000;
    else if (answer.error === "access_denied") throw new CommandError(`sign-in refused: ${answer.description}`);
    else if (answer.error === "expired_token") throw new CommandError("the code expired before it was confirmed; run platform-api login again");
    else throw new CommandError(`sign-in not completed: ${answer.description}`);
  }
}
