import { chmod, mkdir, stat } from "node:fs/promises";
import { homedir } from "node:os";
import { join } from "node:path";

/**
 * `$XDG_CONFIG_HOME/platform-api` (an empty or relative XDG_CONFIG_HOME counts as unset, as the
 * XDG spec asks), else `~/.config/platform-api`; read from the environment at each call.
 */
export function credentialsDir(): string {
  const xdg = process.env.XDG_CONFIG_HOME;
  return join(xdg && xdg.startsWith("/") ? xdg : join(homedir(), ".config"), "platform-api");
}

export const credentialsFile = (): string => join(credentialsDir(), "credentials.json");
export const credentialsLockFile = (): string => join(credentialsDir(), "credentials.lock");

/** Creates the directory with mode 0700, or narrows it to 0700 when it exists with a wider mode; returns its path. */
export async function ensureCredentialsDir(): Promise<string> {
  const dir = credentialsDir();
  await mkdir(dir, { recursive: true, mode: 0o700 });
  await narrowMode(dir, 0o700);
  return dir;
}

/** Takes from `path`'s permissions whatever `mode` does not allow. Throws ENOENT when it does not exist. */
export async function narrowMode(path: string, mode: number): Promise<void> {
  const info = await stat(path);
  if ((info.mode & 0o777 & ~mode) !== 0) await chmod(path, info.mode & 0o777 & mode);
}
