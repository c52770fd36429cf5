// Streaming reader of OSV feeds: record files, directories of them (a feed's git tree) and zip
// archives of them (osv.dev's per-ecosystem all.zip). A few records are in memory at a time.

import type { Dirent } from "node:fs";
import { readdir, stat } from "node:fs/promises";
import { join } from "node:path";
import { collectBounded, readFileBounded, type BoundedBytes } from "./bounded-read.js";
import { OsvFeedError, OsvRecordError } from "./errors.js";
import { parseOsvDocument, type ParseOsvOptions } from "./parse.js";
import { OSV_LIMITS, type OsvRecord } from "./record.js";
import { ZipArchive, type ZipArchiveEntry } from "./zip.js";

/** One record read, or one failure. Exactly one of `record` and `error` is set. */
export interface FeedEntry {
  /** The file path, `archive.zip!name/in/archive.json`, or the directory or archive that failed. */
  readonly source: string;
  readonly record?: OsvRecord;
  /** OsvRecordError: this record was refused. OsvFeedError: a directory or archive failed part way. */
  readonly error?: OsvRecordError | OsvFeedError;
}

/** An input about to be read (for progress reporting). */
export interface FeedInput {
  readonly path: string;
  readonly kind: "file" | "directory" | "zip";
  /** For a zip: the number of entries its central directory lists, an upper bound on its records. */
  readonly entries?: number;
}

export interface ReadOsvFeedOptions extends ParseOsvOptions {
  /** Bytes one record may have (default OSV_LIMITS.recordBytes, 8 MiB). */
  readonly maxRecordBytes?: number;
  /** Called as each input (argument) is started. */
  readonly onInput?: (input: FeedInput) => void;
}

type Input = { readonly path: string; readonly kind: FeedInput["kind"] };

/**
 * Files of a directory being read at once: the record handed out and those read ahead of it, so
 * the reads wait on the disk (libuv's threads) while this thread parses and stores. Four to eight
 * keep the threads busy; more only hold more records.
 */
const READ_AHEAD = 8;

const hasExtension = (name: string, extension: string) => name.toLowerCase().endsWith(extension);

/** Hidden files and folders (`.git`, `.github`), and the `__MACOSX` folder of archives made on macOS, are not read. */
const isSkippedSegment = (name: string) => name.startsWith(".") || name === "__MACOSX";

const byName = (a: Dirent, b: Dirent) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);

function describeIoError(error: unknown): string {
  const code = (error as NodeJS.ErrnoException).code;
  if (code === "ENOENT") return "no such file or directory";
  if (code === "EACCES" || code === "EPERM") return "permission denied";
  if (code === "EISDIR") return "is a directory";
  return (error as Error).message;
}

/** Checks every argument before anything is read, so a mistyped path fails the whole run at once. */
async function resolveInputs(paths: readonly string[]): Promise<Input[]> {
  const inputs: Input[] = [];
  for (const path of paths) {
    let info;
    try {
      info = await stat(path);
    } catch (error) {
      throw new OsvFeedError(path, describeIoError(error));
    }
    if (info.isDirectory()) inputs.push({ path, kind: "directory" });
    else if (info.isFile() && hasExtension(path, ".zip")) inputs.push({ path, kind: "zip" });
    else if (info.isFile() && hasExtension(path, ".json")) inputs.push({ path, kind: "file" });
    else throw new OsvFeedError(path, "not a .json file, a .zip file or a directory");
  }
  return inputs;
}

function tooLarge(source: string, limit: number, size?: number): OsvRecordError {
  const what = size === undefined ? "more than" : `${size} bytes; at most`;
  return new OsvRecordError(source, "", `the record is ${what} ${limit} bytes, the limit for one record`, "too-large");
}

function parsed(source: string, read: BoundedBytes, limit: number, options: ParseOsvOptions): FeedEntry {
  if ("tooLarge" in read) return { source, error: tooLarge(source, limit, read.size) };
  try {
    return { source, record: parseOsvDocument(read.bytes, source, options) };
  } catch (error) {
    if (error instanceof OsvRecordError) return { source, error };
    throw error;
  }
}

async function readRecordFile(path: string, limit: number, options: ParseOsvOptions): Promise<FeedEntry> {
  let read: BoundedBytes;
  try {
    read = await readFileBounded(path, limit);
  } catch (error) {
    return { source: path, error: new OsvRecordError(path, "", describeIoError(error), "unreadable") };
  }
  return parsed(path, read, limit, options);
}

/** The `.json` files under a directory, depth first, each folder's entries in code-unit order of their names. */
async function* walkDirectory(dir: string): AsyncGenerator<{ file: string } | { error: OsvFeedError }> {
  let entries: Dirent[];
  try {
    entries = await readdir(dir, { withFileTypes: true });
  } catch (error) {
    yield { error: new OsvFeedError(dir, `cannot list the directory: ${describeIoError(error)}`) };
    return;
  }
  entries.sort(byName);
  for (const entry of entries) {
    if (isSkippedSegment(entry.name)) continue;
    const path = join(dir, entry.name);
    if (entry.isDirectory()) {
      yield* walkDirectory(path);
    } else if (hasExtension(entry.name, ".json")) {
      // Symbolic links to files are followed; links to directories are not (no cycles).
      if (entry.isFile()) yield { file: path };
      else if (entry.isSymbolicLink()) {
        const target = await stat(path).catch(() => undefined);
        if (target?.isFile()) yield { file: path };
      }
    }
  }
}

async function zipEntryRecord(zip: ZipArchive, entry: ZipArchiveEntry, source: string, limit: number, options: ParseOsvOptions): Promise<FeedEntry> {
  if (entry.unsafeName) {
    return { source, error: new OsvRecordError(source, "", `refused: the entry's name is unsafe (${entry.unsafeName})`, "unsafe-name") };
  }
  if (entry.encrypted) return { source, error: new OsvRecordError(source, "", "the entry is encrypted", "unreadable") };
  if (entry.declaredSize > limit) return { source, error: tooLarge(source, limit, entry.declaredSize) };
  let read: BoundedBytes;
  try {
    read = await collectBounded(await zip.openStream(entry), limit);
  } catch (error) {
    return { source, error: new OsvRecordError(source, "", `cannot read the entry: ${(error as Error).message}`, "unreadable") };
  }
  return parsed(source, read, limit, options);
}

async function* readZip(path: string, limit: number, options: ReadOsvFeedOptions): AsyncGenerator<FeedEntry> {
  let zip: ZipArchive;
  try {
    zip = await ZipArchive.open(path);
  } catch (error) {
    yield { source: path, error: new OsvFeedError(path, `not a readable zip archive: ${(error as Error).message}`) };
    return;
  }
  try {
    options.onInput?.({ path, kind: "zip", entries: zip.entryCount });
    for (;;) {
      let entry: ZipArchiveEntry | undefined;
      try {
        entry = await zip.next();
      } catch (error) {
        yield { source: path, error: new OsvFeedError(path, `the archive is corrupt: ${(error as Error).message}`) };
        return;
      }
      if (!entry) return;
      const source = `${path}!${entry.name}`;
      // An unsafe name is reported whatever the entry is: it marks a crafted or broken archive.
      const skipped = entry.directory || entry.name.split("/").some(isSkippedSegment) || !hasExtension(entry.name, ".json");
      if (skipped && !entry.unsafeName) continue;
      yield await zipEntryRecord(zip, entry, source, limit, options);
    }
  } finally {
    zip.close();
  }
}

/**
 * The entries of a directory's files (and of its listing failures), in the walk's order, with up to
 * READ_AHEAD files read at once.
 */
async function* readFiles(found: AsyncIterable<{ file: string } | { error: OsvFeedError }>, limit: number, options: ParseOsvOptions): AsyncGenerator<FeedEntry> {
  const pending: Promise<FeedEntry>[] = [];
  for await (const item of found) {
    const next = "error" in item ? Promise.resolve({ source: item.error.source, error: item.error }) : readRecordFile(item.file, limit, options);
    // Should the consumer stop early, a read left pending must not become an unhandled rejection.
    next.catch(() => {});
    pending.push(next);
    if (pending.length >= READ_AHEAD) yield await pending.shift()!;
  }
  while (pending.length > 0) yield await pending.shift()!;
}

/**
 * Reads OSV records from `paths`, in the order given: a `.json` file is one record; a directory is
 * walked for `*.json` files (depth first, names in code-unit order, hidden entries skipped); a `.zip`
 * archive yields its `*.json` entries in central-directory order. Yields one entry per record file,
 * holding the record or why it was refused; a failure of one record never stops the feed.
 *
 * Before anything is read, every path is checked: one that does not exist or is none of the three
 * kinds throws an OsvFeedError from the first step of the iteration.
 *
 * Memory is bounded by a few records (READ_AHEAD files of a directory; one zip entry): a record
 * over `maxRecordBytes` is refused from its size (file size, zip header) and, should the size lie,
 * by counting bytes while reading.
 */
export async function* readOsvFeed(paths: readonly string[], options: ReadOsvFeedOptions = {}): AsyncGenerator<FeedEntry> {
  const limit = options.maxRecordBytes ?? OSV_LIMITS.recordBytes;
  const inputs = await resolveInputs(paths);
  for (const input of inputs) {
    if (input.kind === "zip") {
      yield* readZip(input.path, limit, options);
      continue;
    }
    options.onInput?.(input);
    if (input.kind === "file") {
      yield await readRecordFile(input.path, limit, options);
      continue;
    }
    yield* readFiles(walkDirectory(input.path), limit, options);
  }
}
