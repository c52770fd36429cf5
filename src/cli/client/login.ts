import { parseDuration, UsageError, type Options } from "../../command/options.js";
import { apiUrlOf } from "./api-url.js";
import { browserLogin } from "./browser-login.js";
import { updateCredentials } from "./credentials.js";
import { deviceLogin } from "./device-login.js";

/** `platform-api login`: signs in (browser or --headless), stores the session as the current one, says so on stderr. */
export async function login(options: Options): Promise<void> {
  const api = await apiUrlOf(options["api-url"]);
  let timeoutMs: number;
  try {
    timeoutMs = parseDuration(options.timeout as string) * 1000;
  } catch (error) {
    throw new UsageError(`--timeout: ${(error as Error).message}`);
  }
  const how = { identityProvider: options["identity-provider"] as string | undefined, timeoutMs };
  const session = options.headless === true ? await deviceLogin(api, how) : await browserLogin(api, how);
  await updateCredentials((credentials) => {
    credentials.sessions[api] = session;
    credentials.current = api;
    return true;
  });
  process.stderr.write(`Signed in to ${api}\n`);
}
