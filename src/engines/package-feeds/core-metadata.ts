// Python packaging "core metadata" (https://packaging.python.org/specifications/core-metadata/):
// the RFC 822 style headers of a wheel's `*.dist-info/METADATA`, an sdist's `PKG-INFO`, or the
// `<file>.metadata` a PEP 658 index serves. Only the headers are read; the body (the long
// description of Metadata-Version 2.1 and later) is not.

import { isValidVersion } from "../advisories/ecosystems.js";
import { LibraryDocumentError, PYPI_NAME } from "./library-package.js";

/** What the index keeps of one distribution's core metadata. */
export interface CoreMetadata {
  readonly name: string;
  /** A PEP 440 version. */
  readonly version: string;
  /** `Summary`, "" when absent. */
  readonly summary: string;
}

/** Longest header block read: far above any real one (they are a few kilobytes before the body). */
const MAX_HEADER_LINES = 10_000;

/** The headers the index reads. */
const KEPT = new Set(["metadata-version", "name", "version", "summary"]);

/**
 * The kept headers, up to the first empty line, by lower-case name. A line starting with a space or
 * a tab continues the previous header (folded with one space); the first occurrence of a header wins.
 * @throws LibraryDocumentError for a line that is neither a header nor a continuation.
 */
function headersOf(text: string, source: string): Map<string, string> {
  const headers = new Map<string, string>();
  let seen = false;
  /** The header a continuation line extends; undefined when it is not kept or was repeated. */
  let target: string | undefined;
  const lines = text.replace(/^\uFEFF/, "").split(/\r?\n/, MAX_HEADER_LINES);
  for (const [i, line] of lines.entries()) {
    if (line === "") break;
    if (/^[ \t]/.test(line)) {
      if (!seen) throw new LibraryDocumentError(source, `line ${i + 1}: a continuation line before any header`);
      if (target !== undefined) headers.set(target, `${headers.get(target)} ${line.trim()}`.trim());
      continue;
    }
    const colon = line.indexOf(":");
    if (colon <= 0 || !/^[A-Za-z0-9-]+$/.test(line.slice(0, colon))) throw new LibraryDocumentError(source, `line ${i + 1}: not a "Name: value" header`);
    seen = true;
    const key = line.slice(0, colon).toLowerCase();
    target = KEPT.has(key) && !headers.has(key) ? key : undefined;
    if (target !== undefined) headers.set(key, line.slice(colon + 1).trim());
  }
  return headers;
}

/**
 * Parses core metadata: `Metadata-Version`, `Name` (a PEP 508 name) and `Version` (PEP 440) are
 * required; `Summary` is kept.
 * @throws LibraryDocumentError naming the header that is missing or wrong.
 */
export function parseCoreMetadata(text: string, source: string): CoreMetadata {
  const headers = headersOf(text, source);
  const required = (field: string) => {
    const value = headers.get(field.toLowerCase());
    if (value === undefined || value === "") throw new LibraryDocumentError(source, `not Python core metadata (no ${field} header)`);
    return value;
  };
  required("Metadata-Version");
  const name = required("Name");
  if (!PYPI_NAME.test(name)) throw new LibraryDocumentError(source, `Name: ${JSON.stringify(name)} is not a Python project name`);
  const version = required("Version");
  if (!isValidVersion("PyPI", version)) throw new LibraryDocumentError(source, `Version: ${JSON.stringify(version)} is not a PEP 440 version`);
  return { name, version, summary: headers.get("summary") ?? "" };
}
