// Reads library metadata from files and folders, whatever ecosystem wrote it:
// - `.json`: one npm package document or one PyPI JSON API document, told apart by their shape;
// - `maven-metadata*.xml`: a Maven artifact (the metadata files of one folder together, and the POMs
//   of the repository layout below it);
// - Python distributions (`.whl`, `.tar.gz` sdists, `.metadata`, `METADATA`, `PKG-INFO`): each is one
//   version; the versions of one project (PEP 503 names) are gathered over the whole feed and yielded
//   as one PyPI project after everything else.
// One document in memory at a time (plus a few fields of each Python version until the end).

import { readdir, readFile, stat } from "node:fs/promises";
import { dirname, join } from "node:path";
import { distributionKind, readDistribution, type Distribution } from "./distributions.js";
import { isObject, LibraryDocumentError, utf8Text, type LibraryPackage } from "./library-package.js";
import { isMavenMetadataName, readMavenArtifact } from "./maven.js";
import { parseNpmDocument } from "./npm.js";
import { parsePypiDocument, pypiProjectKey, pypiProjectOf } from "./pypi.js";

/** Bytes one JSON document may have. */
export const MAX_DOCUMENT_BYTES = 16 * 1024 * 1024;

/** One package read, or why a file was refused. Exactly one of item and error is set. */
export interface LibraryFeedEntry {
  readonly source: string;
  readonly item?: LibraryPackage;
  readonly error?: LibraryDocumentError;
}

/** A path that is neither a metadata file this reader knows nor a folder; thrown before anything is read. */
export class LibraryFeedError extends Error {
  override readonly name = "LibraryFeedError";
}

/** Parses one JSON document: PyPI when it has `info` and `releases`, npm otherwise. */
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

/** What one source is: a JSON document, the Maven metadata files of one folder, or a Python distribution. */
type Source = { kind: "json"; path: string } | { kind: "maven"; paths: string[] } | { kind: "python"; path: string };

/** The source a file given by name is, if it is one this reader knows. */
function sourceOf(path: string): Source | undefined {
  const lower = path.toLowerCase();
  if (lower.endsWith(".json")) return { kind: "json", path };
  if (isMavenMetadataName(path) || lower.endsWith(".xml")) return { kind: "maven", paths: [path] };
  return distributionKind(path) ? { kind: "python", path } : undefined;
}

const byName = (a: { name: string }, b: { name: string }) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);

/** The sources below a folder, in name order; the Maven metadata files of one folder are one source. Other files are ignored. */
async function* sourcesUnder(dir: string): AsyncGenerator<Source> {
  const entries = (await readdir(dir, { withFileTypes: true })).sort(byName);
  const maven = entries.filter((e) => e.isFile() && isMavenMetadataName(e.name)).map((e) => join(dir, e.name));
  if (maven.length > 0) yield { kind: "maven", paths: maven };
  for (const e of entries) {
    if (e.name.startsWith(".")) continue;
    const path = join(dir, e.name);
    if (e.isDirectory()) yield* sourcesUnder(path);
    else if (e.isFile() && !isMavenMetadataName(e.name)) {
      const source = sourceOf(path);
      if (source) yield source;
    }
  }
}

/**
 * The packages of `paths` (files, and the sources below folders, in name order), then the Python
 * projects their distributions make, in name order.
 * @throws LibraryFeedError, on the first step, for a path that is missing or neither a folder nor a
 *   file this reader knows.
 */
export async function* readLibraryFeed(paths: string[]): AsyncGenerator<LibraryFeedEntry> {
  const sources: Array<Source | "directory"> = [];
  for (const path of paths) {
    const info = await stat(path).catch(() => undefined);
    const source = info?.isFile() ? sourceOf(path) : undefined;
    if (info?.isDirectory()) sources.push("directory");
    else if (source) sources.push(source);
    else {
      const known = "a .json document, a maven-metadata .xml file, a Python distribution (.whl, .tar.gz, .metadata, METADATA, PKG-INFO) or a folder";
      throw new LibraryFeedError(info ? `${path}: not ${known}` : `${path}: no such file or folder`);
    }
  }
  const projects = new Map<string, Distribution[]>();
  for (const [i, path] of paths.entries()) {
    const given = sources[i];
    for await (const source of given === "directory" ? sourcesUnder(path) : [given]) {
      if (source.kind !== "python") {
        const entry = await (source.kind === "json" ? readDocument(source.path) : readMaven(source.paths));
        if (entry) yield entry;
        continue;
      }
      try {
        const distribution = await readDistribution(source.path, distributionKind(source.path)!);
        const key = pypiProjectKey(distribution.metadata.name);
        const gathered = projects.get(key);
        if (gathered) gathered.push(distribution);
        else projects.set(key, [distribution]);
      } catch (error) {
        yield { source: source.path, error: asDocumentError(source.path, error) };
      }
    }
  }
  for (const key of [...projects.keys()].sort()) yield { source: key, item: pypiProjectOf(projects.get(key)!) };
}

const asDocumentError = (source: string, error: unknown): LibraryDocumentError =>
  error instanceof LibraryDocumentError ? error : new LibraryDocumentError(source, `unreadable: ${(error as Error).message}`);

async function readDocument(source: string): Promise<LibraryFeedEntry> {
  try {
    const info = await stat(source);
    if (info.size > MAX_DOCUMENT_BYTES) return { source, error: new LibraryDocumentError(source, `larger than ${MAX_DOCUMENT_BYTES} bytes`) };
    return { source, item: parseLibraryDocument(utf8Text(await readFile(source), source), source) };
  } catch (error) {
    return { source, error: asDocumentError(source, error) };
  }
}

async function readMaven(paths: string[]): Promise<LibraryFeedEntry | undefined> {
  const source = paths.length === 1 ? paths[0] : join(dirname(paths[0]), "maven-metadata*.xml");
  try {
    const item = await readMavenArtifact(paths);
    return item ? { source, item } : undefined;
  } catch (error) {
    return { source, error: asDocumentError(source, error) };
  }
}

