import { isObject, LibraryDocumentError, stringOr, timeOf, type LibraryPackage, type LibraryVersion } from "./library-package.js";

/** PEP 508 project names. */
const PYPI_NAME = /^([A-Z0-9]|[A-Z0-9][A-Z0-9._-]*[A-Z0-9])$/i;

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
