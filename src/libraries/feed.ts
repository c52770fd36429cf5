// Reads library metadata documents from files and folders: each `.json` file is one npm package
// document or one PyPI JSON API document, told apart by their shape. One document in memory at a time.

import { readdir, readFile, stat } from "node:fs/promises";
import { join } from "node:path";
import { isObject, LibraryDocumentError, type LibraryPackage } from "./library-package.js";
import { parseNpmDocument } from "./npm.js";
import { parsePypiDocument } from "./pypi.js";

/** Bytes one document may have. */
export const MAX_DOCUMENT_BYTES = 16 * 1024 * 1024;

/** One document read, or why it was refused. Exactly one is set. */
export interface LibraryFeedEntry {
  readonly source: string;
  readonly item?: LibraryPackage;
  readonly error?: LibraryDocumentError;
}

/** A path that is neither a `.json` file nor a folder; thrown before anything is read. */
export class LibraryFeedError extends Error {
  override readonly name = "LibraryFeedError";
}

/** Parses one document: PyPI when it has `info` and `releases`, npm otherwise. */
export function parseLibraryDocument(text: string, source: string): LibraryPackage {
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch {
    throw new LibraryDocumentError(source, "not JSON");
  }
  if (isObject(doc) && "info" in doc && "releases" in doc) return parsePypiDocument(doc, source);
  return parseNpmDocument(doc, source);
}

async function* filesUnder(dir: string): AsyncGenerator<string> {
  const entries = (await readdir(dir, { withFileTypes: true })).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  for (const e of entries) {
    if (e.name.startsWith(".")) continue;
    const path = join(dir, e.name);
    if (e.isDirectory()) yield* filesUnder(path);
    else if (e.isFile() && e.name.toLowerCase().endsWith(".json")) yield path;
  }
}

/**
 * The documents of `paths` (files, and the `.json` files below folders, in name order).
 * @throws LibraryFeedError, on the first step, for a path that is missing or not a .json file or folder.
 */
export async function* readLibraryFeed(paths: string[]): AsyncGenerator<LibraryFeedEntry> {
  const kinds: Array<"file" | "directory"> = [];
  for (const path of paths) {
    const info = await stat(path).catch(() => undefined);
    if (info?.isDirectory()) kinds.push("directory");
    else if (info?.isFile() && path.toLowerCase().endsWith(".json")) kinds.push("file");
    else throw new LibraryFeedError(info ? `${path}: not a .json file or a folder` : `${path}: no such file or folder`);
  }
  for (const [i, path] of paths.entries()) {
    const files = kinds[i] === "file" ? [path] : filesUnder(path);
    for await (const file of files) yield await readDocument(file);
  }
}

async function readDocument(source: string): Promise<LibraryFeedEntry> {
  try {
    const info = await stat(source);
    if (info.size > MAX_DOCUMENT_BYTES) return { source, error: new LibraryDocumentError(source, `larger than ${MAX_DOCUMENT_BYTES} bytes`) };
    return { source, item: parseLibraryDocument(await readFile(source, "utf8"), source) };
  } catch (error) {
    if (error instanceof LibraryDocumentError) return { source, error };
    return { source, error: new LibraryDocumentError(source, `unreadable: ${(error as Error).message}`) };
  }
}
