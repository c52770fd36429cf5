// The temporary folders of feed syncs (an archive, or an index and its records): one per sync in
// the system's temporary folder (`TMPDIR`), named after the host and the process that made it
// (`platform-api-feed-<host>-<pid>-<the process's nonce>-<random>`). A folder is removed when its sync ends, whatever
// the end; those still there when the process exits (an uncaught error included) are removed at
// exit; and those of a process that died without exiting (SIGKILL, the OOM killer, a power loss)
// by the next `serve` or `advisories sync` that starts on the same host.

import { randomBytes } from "node:crypto";
import { rmSync } from "node:fs";
import { mkdtemp, readdir, rm } from "node:fs/promises";
import { hostname, tmpdir } from "node:os";
import { join } from "node:path";

const PREFIX = "platform-api-feed-";
/** `<host>-<pid>-<nonce>-<mkdtemp's six characters>` after the prefix. */
const NAME = /^(.+)-(\d+)-([0-9a-f]{8})-[A-Za-z0-9]{6}$/;
/** Tells this process's folders from those of an earlier process that had its pid (a container's first process is always 1). */
const NONCE = randomBytes(4).toString("hex");

/** This process's folders not yet removed. */
const live = new Set<string>();
let removedAtExit = false;

/** The host's name as folder names carry it: letters, digits, `.` and `-`, at most 63 characters. */
function hostPart(): string {
  return hostname().replace(/[^A-Za-z0-9.-]/g, "_").slice(0, 63) || "host";
}

/** Whether the process `pid` of this host runs (one that runs as another user counts). */
function running(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** Makes a new, empty folder for one sync's downloads; remove it with `removeDownloadDir`. */
export async function createDownloadDir(): Promise<string> {
  if (!removedAtExit) {
    removedAtExit = true;
    process.once("exit", () => {
      for (const dir of live) rmSync(dir, { recursive: true, force: true });
    });
  }
  const dir = await mkdtemp(join(tmpdir(), `${PREFIX}${hostPart()}-${process.pid}-${NONCE}-`));
  live.add(dir);
  return dir;
}

/** Removes a folder of `createDownloadDir` and all it holds. Never throws: a folder it could not remove is removed at exit, or at the next start. */
export async function removeDownloadDir(dir: string): Promise<void> {
  try {
    await rm(dir, { recursive: true, force: true });
    live.delete(dir);
  } catch {
    // Kept in `live`: tried again at exit.
  }
}

/**
 * Removes the download folders that no process of this host uses any more: those named after a
 * process of this host that no longer runs, or after an earlier process that had this one's pid.
 * Folders of other hosts (a temporary folder shared between containers) and of running processes
 * are left alone. Returns the folders removed; throws only when the temporary folder cannot be listed.
 */
export async function removeStaleDownloads(): Promise<string[]> {
  const parent = tmpdir();
  const host = hostPart();
  const removed: string[] = [];
  for (const name of await readdir(parent)) {
    if (!name.startsWith(PREFIX)) continue;
    const match = NAME.exec(name.slice(PREFIX.length));
    if (!match || match[1] !== host) continue;
    const pid = Number(match[2]);
    const dir = join(parent, name);
    if (pid === process.pid ? match[3] === NONCE : running(pid)) continue;
    await rm(dir, { recursive: true, force: true }).then(
      () => removed.push(dir),
      () => {},
    );
  }
  return removed;
}
