import { CommandError, UsageError } from "../../command/options.js";
import { call } from "./http.js";

/** A registry host as image references name it (`localhost:5000`), and its public URL, the audience of its tokens. */
export interface RegistryHost {
  host: string;
  registryUrl: string;
}

/** How long the registry may take to answer `GET /v2/`. */
const PROBE_TIMEOUT_MS = 15_000;

/**
 * The registry `--registry` names: a host (`registry.example.com`, `localhost:5000`), reached with the
 * scheme of `api`, or a URL. Its public URL is the one the registry itself names: the realm of the
 * Bearer challenge its `GET /v2/` answers to an anonymous caller, less `/token`. Throws UsageError
 * for a text that names no host, CommandError when it cannot be reached or answers no challenge.
 */
export async function registryHostOf(text: string, api: string): Promise<RegistryHost> {
  let url: URL | undefined;
  try {
    url = new URL(/^[a-z][a-z0-9+.-]*:\/\//i.test(text) ? text : `${new URL(api).protocol}//${text}`);
  } catch {
    url = undefined;
  }
  if (!url || (url.protocol !== "http:" && url.protocol !== "https:") || url.host === "" || url.username || url.search || url.hash || url.pathname !== "/") {
    throw new UsageError(`--registry: "${text}" is not a registry host (registry.example.com, localhost:5000) or its URL`);
  }
  const response = await call(url.origin, "/v2/", {}, PROBE_TIMEOUT_MS);
  await response.body?.cancel();
  const challenge = response.headers.get("www-authenticate") ?? "";
  const realm = /^Bearer\s.*\brealm="([^"]+)"/i.exec(challenge)?.[1];
  if (response.status !== 401 || realm === undefined || !realm.endsWith("/token")) {
    throw new CommandError(`${url.origin}/v2/ answered ${response.status} without a Bearer challenge: is it the registry host of platform-api?`);
  }
  return { host: url.host, registryUrl: realm.slice(0, -"/token".length) };
}
