import { CommandError, UsageError, type OptionSpec } from "../../command/options.js";
import { readCredentials } from "./credentials.js";

export const DEFAULT_API_URL = "http://localhost:8080";

/** `--api-url` of every client command. */
export const apiUrlOption: Record<string, OptionSpec> = {
  "api-url": { type: "string", env: "PLATFORM_API_URL", help: `URL of the API host; default the one last signed into, else ${DEFAULT_API_URL}` },
};

/** An http(s) URL without a trailing slash, the key of its session; UsageError otherwise. */
export function normalizeApiUrl(text: string): string {
  let url: URL | undefined;
  try {
    url = new URL(text);
  } catch {
    url = undefined;
  }
  if (!url || (url.protocol !== "http:" && url.protocol !== "https:") || url.search || url.hash) {
    throw new UsageError(`--api-url: "${text}" is not an http:// or https:// URL`);
  }
  return url.href.replace(/\/+$/, "");
}

/** The API a command talks to: --api-url (or PLATFORM_API_URL), else the one last signed into, else DEFAULT_API_URL. */
export async function apiUrlOf(option: string | boolean | undefined): Promise<string> {
  if (typeof option === "string") return normalizeApiUrl(option);
  return (await readCredentials()).current ?? DEFAULT_API_URL;
}

/** The refusal of a command that needs a session for `api` when there is none. */
export const notSignedIn = (api: string): CommandError => new CommandError(`not signed in to ${api}: run platform-api login --api-url ${api}`);
