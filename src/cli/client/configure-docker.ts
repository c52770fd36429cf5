import { access, constants } from "node:fs/promises";
import { delimiter, join } from "node:path";
import { UsageError, type Options } from "../../command/options.js";
import { apiUrlOf, notSignedIn } from "./api-url.js";
import { readCredentials } from "./credentials.js";
import { addCredHelper, containersAuthFile, dockerConfigFile, HELPER_EXECUTABLE } from "./docker-config.js";
import { addRegistry } from "./registries-file.js";
import { mintRegistryToken } from "./registry-token.js";
import { registryHostOf } from "./registry-host.js";

/**
 * `platform-api auth configure-docker --registry <host> [--authfile <path>] [--containers-auth]`:
 * for the signed-in person of `--api-url`, mints one token for the registry (so that a registry the
 * API does not issue for, or an ended session, is refused now rather than at the first pull), then
 * records which API's session serves the host (registries.json) and names the credential helper
 * for it (`credHelpers`) in Docker's config.json and the auth files asked for. No token is written
 * to any of them. Says on stderr what it wrote, and when the helper is not on PATH.
 */
export async function configureDocker(options: Options): Promise<void> {
  const registry = options.registry;
  if (typeof registry !== "string" || registry === "") {
    throw new UsageError("auth configure-docker needs --registry <host> (the registry host as image references name it: registry.example.com, localhost:5000)");
  }
  const api = await apiUrlOf(options["api-url"]);
  if (!(await readCredentials()).sessions[api]) throw notSignedIn(api);
  const { host, registryUrl } = await registryHostOf(registry, api);
  await mintRegistryToken(api, registryUrl);
  await addRegistry(host, { api, registryUrl });
  const files = [dockerConfigFile()];
  if (typeof options.authfile === "string" && options.authfile !== "") files.push(options.authfile);
  if (options["containers-auth"] === true) files.push(containersAuthFile());
  for (const file of new Set(files)) await addCredHelper(file, host);
  process.stderr.write(`${host}: credHelpers names ${HELPER_EXECUTABLE} in ${[...new Set(files)].join(", ")}; each pull or push gets a token for ${registryUrl} from your session at ${api}\n`);
  if (!(await onPath(HELPER_EXECUTABLE))) {
    process.stderr.write(`${HELPER_EXECUTABLE} is not on PATH: docker, skopeo and podman run it from there (npm install -g puts it there; or add the bin folder of platform-api to PATH)\n`);
  }
}

/** Whether an executable file `name` is in a folder of PATH. */
async function onPath(name: string): Promise<boolean> {
  for (const folder of (process.env.PATH ?? "").split(delimiter).filter(Boolean)) {
    if (await access(join(folder, name), constants.X_OK).then(() => true, () => false)) return true;
  }
  return false;
}
