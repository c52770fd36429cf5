import type { Distribution } from "./distributions.js";
import { isObject, LibraryDocumentError, PYPI_NAME, stringOr, timeOf, type LibraryPackage, type LibraryVersion } from "./library-package.js";
import { latestVersion } from "./versions.js";


/**
 * A PyPI JSON API document (`GET https://pypi.org/pypi/<project>/json`): `info` (name, summary,
 * version) and `releases` (version to its files, each with `size` and `upload_time_iso_8601`).
 * A release's size is its largest file; its publish time its earliest upload. Releases with no
 * file (deleted) are still versions.
 */
export function parsePypiDocument(doc: unknown, source: string): LibraryPackage {
  if (!isObject(doc) || !isObject(doc.info) || !isObject(doc.releases)) throw new LibraryDocumentError(source, "not a PyPI JSON API document (needs `info` and `releases`)");
  const name = doc.info.name;
  if (typeof name !== "string" || !PYPI_NAME.test(name)) throw new LibraryDocumentError(source, `info.name: ${JSON.stringify(name)} is not a PyPI project name`);
  const versions: LibraryVersion[] = Object.entries(doc.releases).map(([version, files]) => {
    if (!Array.isArray(files)) throw new LibraryDocumentError(source, `releases["${version}"]: not a list of files`);
    let size = 0;
    let published: number | undefined;
    for (const file of files) {
      if (!isObject(file)) continue;
      if (typeof file.size === "number" && file.size > size) size = file.size;
      const t = timeOf(file.upload_time_iso_8601) ?? timeOf(file.upload_time);
      if (t !== undefined && (published === undefined || t < published)) published = t;
    }
    return { version, sizeBytes: size, publishTime: published };
  });
  return { ecosystem: "PyPI", name, description: stringOr(doc.info.summary), versions };
}

/** PEP 503 normalization: the key under which two names are the same project. */
export const pypiProjectKey = (name: string): string => name.toLowerCase().replace(/[-_.]+/g, "-");

/**
 * The PyPI project that distributions of one project (names equal under PEP 503) make: one version
 * per distinct version, its size the largest of its files, its description its `Summary`; the
 * project's name and description are those of its latest version (the first file read of it).
 */
export function pypiProjectOf(distributions: readonly Distribution[]): LibraryPackage {
  const versions = new Map<string, { version: string; sizeBytes: number; description: string; name: string }>();
  for (const { metadata, sizeBytes } of distributions) {
    const seen = versions.get(metadata.version);
    if (seen) seen.sizeBytes = Math.max(seen.sizeBytes, sizeBytes);
    else versions.set(metadata.version, { version: metadata.version, sizeBytes, description: metadata.summary, name: metadata.name });
  }
  const latest = versions.get(latestVersion("PyPI", [...versions.keys()]))!;
  return {
    ecosystem: "PyPI",
    name: latest.name,
    description: latest.description,
    versions: [...versions.values()].map(({ version, sizeBytes, description }) => ({ version, sizeBytes, description })),
  };
}
