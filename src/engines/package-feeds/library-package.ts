// One library as its ecosystem's metadata describes it, whatever document it came from.

/** The ecosystems of the library index, by their OSV names (what the advisory matcher orders by). */
export type LibraryEcosystem = "Maven" | "PyPI" | "npm";

export interface LibraryVersion {
  readonly version: string;
  /** npm `dist.unpackedSize`, PyPI the largest file of the release; 0 when unknown. */
  readonly sizeBytes: number;
  /** Epoch ms; undefined when the metadata does not say. */
  readonly publishTime?: number;
  /** The version's own description, when its metadata has one. */
  readonly description?: string;
}

export interface LibraryPackage {
  readonly ecosystem: LibraryEcosystem;
  readonly name: string;
  readonly description: string;
  readonly versions: readonly LibraryVersion[];
}

/** A document that is not the metadata it should be; the message is `<source>: <reason>`. */
export class LibraryDocumentError extends Error {
  override readonly name = "LibraryDocumentError";

  constructor(
    readonly source: string,
    readonly reason: string,
  ) {
    super(`${source}: ${reason}`);
  }
}

/** Epoch ms of an RFC 3339 / ISO 8601 time, or undefined when absent or unreadable. */
export function timeOf(value: unknown): number | undefined {
  if (typeof value !== "string") return undefined;
  const ms = Date.parse(value);
  return Number.isNaN(ms) ? undefined : ms;
}

export const isObject = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null && !Array.isArray(value);

export const stringOr = (value: unknown, fallback = ""): string => (typeof value === "string" ? value : fallback);

/** `bytes` as UTF-8 text; bytes that are not UTF-8 refuse the document, as the advisory import does. */
export function utf8Text(bytes: Uint8Array, source: string): string {
  try {
    return new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    throw new LibraryDocumentError(source, "not UTF-8 text");
  }
}

/** PEP 508 project names. */
export const PYPI_NAME = /^([A-Z0-9]|[A-Z0-9][A-Z0-9._-]*[A-Z0-9])$/i;
