import { join } from "node:path";
import { CommandError } from "../../command/options.js";
import { withCredentialsLock } from "./credentials-lock.js";
import { credentialsDir } from "./credentials-paths.js";
import { readJsonObject, writeJsonAtomically } from "./json-file.js";

/** Where the credential helper gets tokens for one registry host: the API whose session mints them, and the registry's URL (their audience). */
export interface RegistryEntry {
  api: string;
  registryUrl: string;
}

/** `registries.json` beside the credentials file: registry host (`localhost:5000`) → RegistryEntry. No secret is kept there. */
export const registriesFile = (): string => join(credentialsDir(), "registries.json");

/** The registries `auth configure-docker` set up, by host; none when the file does not exist. Throws CommandError for a file this module did not write. */
export async function readRegistries(): Promise<Record<string, RegistryEntry>> {
  const file = registriesFile();
  const read = (await readJsonObject(file)) ?? {};
  for (const entry of Object.values(read)) {
    const { api, registryUrl } = (entry ?? {}) as Partial<RegistryEntry>;
    if (typeof api !== "string" || typeof registryUrl !== "string") throw new CommandError(`${file} is not a registries file of platform-api: remove it and run platform-api auth configure-docker again`);
  }
  return read as Record<string, RegistryEntry>;
}

/** Records (or replaces) the entry of `host`, holding the credentials lock; the file is written atomically, mode 0600. */
export async function addRegistry(host: string, entry: RegistryEntry): Promise<void> {
  await withCredentialsLock(async () => {
    const registries = await readRegistries();
    registries[host] = entry;
    await writeJsonAtomically(registriesFile(), { ...registries }, 0o600);
  });
}
