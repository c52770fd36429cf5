import { randomBytes } from "node:crypto";
import { open, readFile, stat, unlink } from "node:fs/promises";
import { setTimeout as sleep } from "node:timers/promises";
import { CommandError } from "../../command/options.js";
import { credentialsLockFile, ensureCredentialsDir } from "./credentials-paths.js";

/** A lock older than this was left by a process that died holding it, and is broken. */
export const LOCK_STALE_MS = 30_000;
const RETRY_MS = 50;

/**
 * Runs `critical` holding `credentials.lock` beside the credentials file, so that two CLI
 * processes never read, refresh and write the session at once (a refresh token used twice makes
 * the server revoke its whole family). The lock is a file created with O_EXCL holding a token of
 * its owner; it is waited for while younger than LOCK_STALE_MS (so `critical` must finish well
 * within that), then broken. Released on every exit from `critical`, only when still ours.
 * Not guarded: two processes breaking the same stale lock at the same instant.
 */
export async function withCredentialsLock<T>(critical: () => Promise<T>): Promise<T> {
  await ensureCredentialsDir();
  const path = credentialsLockFile();
  const owner = `${process.pid}.${randomBytes(8).toString("hex")}`;
  const giveUp = Date.now() + 2 * LOCK_STALE_MS;
  for (;;) {
    try {
      const handle = await open(path, "wx", 0o600);
      await handle.writeFile(owner).finally(() => handle.close());
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
    }
    const info = await stat(path).catch(() => undefined);
    if (info && Date.now() - info.mtimeMs > LOCK_STALE_MS) await unlink(path).catch(() => undefined);
    else if (Date.now() > giveUp) throw new CommandError(`${path} stays locked by another platform-api process`);
    else await sleep(RETRY_MS);
  }
  try {
    return await critical();
  } finally {
    if ((await readFile(path, "utf8").catch(() => "")) === owner) await unlink(path).catch(() => undefined);
  }
}
