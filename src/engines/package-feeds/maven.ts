// Maven artifacts from a Maven repository's own files: an artifact's `maven-metadata.xml` (or the
// `maven-metadata-local.xml` / `maven-metadata-<repository>.xml` Maven writes in a local repository)
// lists its versions; the POM of each version, where the repository layout has it
// (`<artifact folder>/<version>/<artifactId>-<version>.pom`), gives its name and description.

import { stat } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import { XMLParser, XMLValidator } from "fast-xml-parser";
import { readFileBounded } from "../advisories/osv/bounded-read.js";
import { isObject, LibraryDocumentError, type LibraryPackage, type LibraryVersion } from "./library-package.js";
import { compareLibraryVersions, latestVersion } from "./versions.js";

/** Bytes of one maven-metadata file or POM (real ones are far smaller). */
export const MAX_MAVEN_XML_BYTES = 4 * 1024 * 1024;
/** Versions one artifact may list. */
export const MAX_MAVEN_VERSIONS = 10_000;

/** Maven's id rule for groupId and artifactId. */
const MAVEN_ID = /^[A-Za-z0-9_.-]+$/;
/** Characters Maven refuses in a version (and so a version never escapes its folder). */
const BAD_VERSION = /[\\/:"<>|?*\s]|^\.\.?$/;

/** Whether a file name is a Maven repository metadata file. */
export const isMavenMetadataName = (path: string): boolean => /^maven-metadata(-[^/\\]+)?\.xml$/.test(basename(path));

/** An artifact's versions as one metadata file lists them. */
export interface MavenMetadata {
  readonly groupId: string;
  readonly artifactId: string;
  readonly versions: readonly string[];
}

/** What the index keeps of a POM. */
export interface MavenPom {
  readonly artifactId: string;
  /** The POM's own `<description>`, else its `<name>`, whitespace collapsed; "" for neither. */
  readonly description: string;
  /** `<packaging>`, `jar` when absent. */
  readonly packaging: string;
}

const parser = new XMLParser({
  ignoreAttributes: true,
  parseTagValue: false,
  processEntities: true,
  isArray: (_name, jpath) => jpath === "metadata.versioning.versions.version",
});

function parseXml(xml: string, source: string, what: string): Record<string, unknown> {
  const valid = XMLValidator.validate(xml);
  if (valid !== true) throw new LibraryDocumentError(source, `not ${what}: line ${valid.err.line}: ${valid.err.msg}`);
  try {
    const doc: unknown = parser.parse(xml);
    if (!isObject(doc)) throw new Error("no root element");
    return doc;
  } catch (error) {
    throw new LibraryDocumentError(source, `not ${what}: ${(error as Error).message}`);
  }
}

const textOf = (value: unknown): string => (typeof value === "string" ? value.replace(/\s+/g, " ").trim() : "");

/**
 * Parses a maven-metadata file. Group metadata (plugin prefixes) and a SNAPSHOT version's own
 * metadata (its timestamped builds) list no artifact's versions: undefined.
 * @throws LibraryDocumentError for a file that is not such metadata, or wrong coordinates or versions.
 */
export function parseMavenMetadata(xml: string, source: string): MavenMetadata | undefined {
  const doc = parseXml(xml, source, "Maven repository metadata");
  const root = doc.metadata;
  if (!isObject(root)) throw new LibraryDocumentError(source, "not Maven repository metadata (no <metadata> root)");
  const versioning = isObject(root.versioning) ? root.versioning : undefined;
  if (root.artifactId === undefined && "plugins" in root) return undefined;
  if (root.version !== undefined && versioning?.snapshot !== undefined) return undefined;
  const groupId = textOf(root.groupId);
  const artifactId = textOf(root.artifactId);
  if (!MAVEN_ID.test(groupId)) throw new LibraryDocumentError(source, `groupId: ${JSON.stringify(groupId)} is not a Maven groupId`);
  if (!MAVEN_ID.test(artifactId)) throw new LibraryDocumentError(source, `artifactId: ${JSON.stringify(artifactId)} is not a Maven artifactId`);
  const listed = isObject(versioning?.versions) ? versioning.versions.version : undefined;
  if (!Array.isArray(listed) || listed.length === 0) throw new LibraryDocumentError(source, "versioning.versions lists no version");
  if (listed.length > MAX_MAVEN_VERSIONS) throw new LibraryDocumentError(source, `more than ${MAX_MAVEN_VERSIONS} versions`);
  const versions = listed.map((v, i) => {
    const version = textOf(v);
    if (version === "" || version.length > 256 || BAD_VERSION.test(version)) throw new LibraryDocumentError(source, `versioning.versions.version[${i}]: ${JSON.stringify(version)} is not a Maven version`);
    return version;
  });
  return { groupId, artifactId, versions };
}

/** Parses a POM. @throws LibraryDocumentError for a file that is not one. */
export function parsePom(xml: string, source: string): MavenPom {
  const project = parseXml(xml, source, "a POM").project;
  if (!isObject(project)) throw new LibraryDocumentError(source, "not a POM (no <project> root)");
  return {
    artifactId: textOf(project.artifactId),
    description: textOf(project.description) || textOf(project.name),
    packaging: textOf(project.packaging) || "jar",
  };
}

async function readXml(path: string): Promise<string | undefined> {
  let read;
  try {
    read = await readFileBounded(path, MAX_MAVEN_XML_BYTES);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw new LibraryDocumentError(path, `unreadable: ${(error as Error).message}`);
  }
  if ("tooLarge" in read) throw new LibraryDocumentError(path, `larger than ${MAX_MAVEN_XML_BYTES} bytes`);
  return read.bytes.toString("utf8");
}

/** The file of a packaging in the repository layout (`jar`, `bundle` and `maven-plugin` are jars). */
const EXTENSIONS: Record<string, string> = { pom: "pom", war: "war", ear: "ear", rar: "rar", aar: "aar", zip: "zip" };

/** One version: its POM's description and its main file's size, where the layout has them. */
async function mavenVersion(folder: string, artifactId: string, version: string): Promise<LibraryVersion> {
  const stem = join(folder, version, `${artifactId}-${version}`);
  const xml = await readXml(`${stem}.pom`);
  if (xml === undefined) return { version, sizeBytes: 0 };
  const pom = parsePom(xml, `${stem}.pom`);
  if (pom.artifactId !== "" && pom.artifactId !== artifactId) throw new LibraryDocumentError(`${stem}.pom`, `the POM of ${pom.artifactId}, not of ${artifactId}`);
  const file = await stat(`${stem}.${EXTENSIONS[pom.packaging] ?? "jar"}`).catch(() => undefined);
  return { version, sizeBytes: file?.isFile() ? file.size : 0, description: pom.description };
}

/**
 * The artifact that the metadata files of one folder list (their versions together, as Maven merges
 * a local repository's metadata files): `<groupId>:<artifactId>`, each version described by its POM
 * where the folder has it, the artifact by its latest version's POM (else the highest with one).
 * Undefined when the files are group or SNAPSHOT metadata.
 * @throws LibraryDocumentError naming the file at fault: metadata that disagree on the artifact, or
 *   a metadata file or POM that is not one.
 */
export async function readMavenArtifact(metadataFiles: readonly string[]): Promise<LibraryPackage | undefined> {
  let artifact: MavenMetadata | undefined;
  const versions = new Set<string>();
  for (const path of metadataFiles) {
    const xml = await readXml(path);
    if (xml === undefined) throw new LibraryDocumentError(path, "unreadable: no such file");
    const metadata = parseMavenMetadata(xml, path);
    if (metadata === undefined) continue;
    if (artifact && (artifact.groupId !== metadata.groupId || artifact.artifactId !== metadata.artifactId)) {
      throw new LibraryDocumentError(path, `lists ${metadata.groupId}:${metadata.artifactId}, where ${basename(metadataFiles[0])} beside it lists ${artifact.groupId}:${artifact.artifactId}`);
    }
    artifact ??= metadata;
    for (const v of metadata.versions) versions.add(v);
  }
  if (!artifact) return undefined;
  const folder = dirname(metadataFiles[0]);
  const read: LibraryVersion[] = [];
  for (const version of versions) read.push(await mavenVersion(folder, artifact.artifactId, version));
  const latest = latestVersion("Maven", [...versions]);
  const described = read.filter((v) => v.description).sort((a, b) => compareLibraryVersions("Maven", a.version, b.version)).at(-1);
  return {
    ecosystem: "Maven",
    name: `${artifact.groupId}:${artifact.artifactId}`,
    description: read.find((v) => v.version === latest)?.description || (described?.description ?? ""),
    versions: read,
  };
}
