import { homedir } from "node:os";
import { join } from "node:path";
import { CommandError } from "../../command/options.js";
import { readJsonObject, writeJsonAtomically } from "./json-file.js";

/** The suffix registry clients put after `docker-credential-` to find the helper on PATH. */
export const HELPER_SUFFIX = "platform-api";
export const HELPER_EXECUTABLE = `docker-credential-${HELPER_SUFFIX}`;

/** Docker's client configuration: `config.json` in `$DOCKER_CONFIG`, else in `~/.docker`. */
export function dockerConfigFile(): string {
  return join(process.env.DOCKER_CONFIG || join(homedir(), ".docker"), "config.json");
}

/**
 * The containers-auth file skopeo, podman and buildah read and write first: `$REGISTRY_AUTH_FILE`,
 * else `$XDG_RUNTIME_DIR/containers/auth.json`, else `$XDG_CONFIG_HOME/containers/auth.json`
 * (default `~/.config`), as containers/image looks for it.
 */
export function containersAuthFile(): string {
  if (process.env.REGISTRY_AUTH_FILE) return process.env.REGISTRY_AUTH_FILE;
  if (process.env.XDG_RUNTIME_DIR) return join(process.env.XDG_RUNTIME_DIR, "containers", "auth.json");
  const xdg = process.env.XDG_CONFIG_HOME;
  return join(xdg && xdg.startsWith("/") ? xdg : join(homedir(), ".config"), "containers", "auth.json");
}

/**
 * Sets `credHelpers[host]` to this package's helper in the client configuration `file` (Docker's
 * config.json or a containers auth.json, which share the key), every other key kept as it was;
 * the file is replaced atomically, created with mode 0600. Throws CommandError when the file, or its
 * `credHelpers`, is not a JSON object.
 */
export async function addCredHelper(file: string, host: string): Promise<void> {
  const config = (await readJsonObject(file)) ?? {};
  const helpers = config.credHelpers ?? {};
  if (typeof helpers !== "object" || helpers === null || Array.isArray(helpers)) throw new CommandError(`${file}: "credHelpers" is not a JSON object`);
  config.credHelpers = { ...helpers, [host]: HELPER_SUFFIX };
  await writeJsonAtomically(file, config, 0o600);
}
