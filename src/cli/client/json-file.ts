import { randomBytes } from "node:crypto";
import { mkdir, open, readFile, realpath, rename, stat, unlink } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import { CommandError } from "../../command/options.js";

/** A JSON object read from a file: its keys as they were, to be written back with some changed. */
export type JsonObject = Record<string, unknown>;

/** The JSON object `path` holds, or undefined when it does not exist. Throws CommandError when it holds anything else. */
export async function readJsonObject(path: string): Promise<JsonObject | undefined> {
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw error;
  }
  let parsed: unknown;
  try {
    parsed = text.trim() === "" ? {} : JSON.parse(text);
  } catch {
    parsed = undefined;
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) throw new CommandError(`${path} does not hold a JSON object`);
  return parsed as JsonObject;
}

/**
 * Replaces the file at `path` (the file a symbolic link there names) atomically with `value` as
 * indented JSON: written to a temporary file in the same folder, then renamed over it. An existing
 * file keeps its mode; a new one (and a folder made for it, 0700) gets `mode`.
 */
export async function writeJsonAtomically(path: string, value: JsonObject, mode: number): Promise<void> {
  const target = await realpath(path).catch(() => path);
  const folder = dirname(target);
  await mkdir(folder, { recursive: true, mode: 0o700 });
  const kept = await stat(target).then((info) => info.mode & 0o777, () => mode);
  const temporary = join(folder, `.${basename(target)}.${process.pid}.${randomBytes(6).toString("hex")}.tmp`);
  const handle = await open(temporary, "wx", kept);
  try {
    await handle.chmod(kept);
    await handle.writeFile(`${JSON.stringify(value, null, 2)}\n`);
    await handle.sync();
  } finally {
    await handle.close();
  }
  try {
    await rename(temporary, target);
  } catch (error) {
    await unlink(temporary).catch(() => undefined);
    throw error;
  }
}
