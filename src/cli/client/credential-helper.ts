import { text } from "node:stream/consumers";
import { CommandError, UsageError } from "../../command/options.js";
import { HELPER_EXECUTABLE } from "./docker-config.js";
import { readRegistries } from "./registries-file.js";
import { mintRegistryToken } from "./registry-token.js";

/** The username the registry host takes with a platform token as password. */
export const TOKEN_USERNAME = "_token";
/** The protocol's answer to `get` for a server it holds nothing for: docker and containers/image then go on without credentials. */
export const NOT_FOUND = "credentials not found in native keychain";

/** A failure told to the registry client: one line on stdout, exit status 1, as the protocol says. */
class HelperFailure extends Error {}

/** `localhost:5000` of `localhost:5000`, `https://localhost:5000/v2/` or `LOCALHOST:5000`. */
function hostOf(serverUrl: string): string {
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(serverUrl)) {
    try {
      return new URL(serverUrl).host;
    } catch {
      return serverUrl.toLowerCase();
    }
  }
  return serverUrl.split("/")[0].toLowerCase();
}

/** The server URL a request names on stdin, trimmed; the protocol's refusal when there is none. */
async function serverUrlOf(input: () => Promise<string>): Promise<string> {
  const serverUrl = (await input()).trim();
  if (serverUrl === "") throw new HelperFailure("no credentials server URL");
  return serverUrl;
}

/** `get`: the credentials of the registry on stdin, a token minted for it from the session that `auth configure-docker` named. */
async function get(input: () => Promise<string>): Promise<string> {
  const serverUrl = await serverUrlOf(input);
  const entry = (await readRegistries())[hostOf(serverUrl)];
  if (entry === undefined) throw new HelperFailure(NOT_FOUND);
  const { token } = await mintRegistryToken(entry.api, entry.registryUrl);
  return `${JSON.stringify({ ServerURL: serverUrl, Username: TOKEN_USERNAME, Secret: token })}\n`;
}

/**
 * The Docker credential helper protocol (github.com/docker/docker-credential-helpers), one action
 * per run: `get` reads a server URL on stdin and prints `{ServerURL, Username: "_token", Secret}`,
 * the secret a platform token for that registry minted now from the person's session (never
 * stored); `list` prints `{<registry host>: "_token"}` for the registries configured; `store` and
 * `erase` read their input and change nothing (the session is the CLI's: `platform-api logout`
 * ends it); `version` prints the helper's name. A failure (an unknown server on `get`: the
 * protocol's "credentials not found in native keychain"; an ended session: what to run) is one
 * line on stdout and resolves to 1. Resolves to the exit status.
 */
export async function serveCredentialHelper(args: readonly string[], version: string): Promise<number> {
  const input = () => text(process.stdin);
  try {
    if (args.length !== 1) throw new HelperFailure(`Usage: ${HELPER_EXECUTABLE} <store|get|erase|list|version>`);
    const action = args[0];
    let output: string;
    if (action === "get") output = await get(input);
    else if (action === "list") output = `${JSON.stringify(Object.fromEntries(Object.keys(await readRegistries()).map((host) => [host, TOKEN_USERNAME])))}\n`;
    else if (action === "store") output = (await input(), "");
    else if (action === "erase") output = (await serverUrlOf(input), "");
    else if (action === "version") output = `${HELPER_EXECUTABLE} (platform-api) ${version}\n`;
    else throw new HelperFailure(`Unknown credential action \`${action}\``);
    process.stdout.write(output);
    return 0;
  } catch (error) {
    const known = error instanceof HelperFailure || error instanceof CommandError || error instanceof UsageError;
    process.stdout.write(`${known ? (error as Error).message : `${HELPER_EXECUTABLE}: unexpected failure: ${(error as Error).message}`}\n`);
    if (!known) process.stderr.write(`${String((error as Error).stack ?? error)}\n`);
    return 1;
  }
}
