import { randomBytes } from "node:crypto";
import { open, readFile, rename, unlink } from "node:fs/promises";
import { join } from "node:path";
import { CommandError } from "../../command/options.js";
import { withCredentialsLock } from "./credentials-lock.js";
import { credentialsFile, ensureCredentialsDir, narrowMode } from "./credentials-paths.js";

/** What one sign-in to an API gave: the access token, its expiry (ISO 8601) and the refresh token. */
export interface Session {
  token: string;
  expiry: string;
  refreshToken: string;
}

/** The credentials file: the API last signed into, and a session per API URL. */
export interface Credentials {
  current?: string;
  sessions: Record<string, Session>;
}

/**
 * The credentials file, or no sessions when it does not exist. A file readable by others is
 * narrowed to 0600 first. Throws CommandError when it is not the JSON this module writes.
 */
export async function readCredentials(): Promise<Credentials> {
  const file = credentialsFile();
  let text: string;
  try {
    await narrowMode(file, 0o600);
    text = await readFile(file, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return { sessions: {} };
    throw error;
  }
  let parsed: Partial<Credentials> | undefined;
  try {
    parsed = JSON.parse(text) as Partial<Credentials>;
  } catch {
    parsed = undefined;
  }
  if (typeof parsed !== "object" || parsed === null || typeof parsed.sessions !== "object" || parsed.sessions === null) {
    throw new CommandError(`${file} is not a credentials file of platform-api: remove it and sign in again`);
  }
  return { current: typeof parsed.current === "string" ? parsed.current : undefined, sessions: parsed.sessions };
}

/**
 * Replaces the credentials file atomically: the JSON goes to a temporary file created with mode
 * 0600 in the same directory (0700), which is then renamed over the file. A reader sees the old
 * file or the new one, never a part. Call it holding the lock (withCredentialsLock).
 */
export async function writeCredentials(credentials: Credentials): Promise<void> {
  const dir = await ensureCredentialsDir();
  const temporary = join(dir, `.credentials.${process.pid}.${randomBytes(6).toString("hex")}.tmp`);
  const handle = await open(temporary, "wx", 0o600);
  try {
    await handle.writeFile(`${JSON.stringify(credentials, null, 2)}\n`);
    await handle.sync();
  } finally {
    await handle.close();
  }
  try {
    await rename(temporary, credentialsFile());
  } catch (error) {
    await unlink(temporary).catch(() => undefined);
    throw error;
  }
}

/**
 * Holding the lock, reads the file, lets `change` edit it in place, and writes it when `change`
 * returns true; resolves to the file as it then is.
 */
export async function updateCredentials(change: (credentials: Credentials) => boolean | Promise<boolean>): Promise<Credentials> {
  return withCredentialsLock(async () => {
    const credentials = await readCredentials();
    if (await change(credentials)) await writeCredentials(credentials);
    return credentials;
  });
}
