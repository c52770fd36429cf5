// Python distributions as PyPI sources: a wheel (`.whl`: its `<name>-<version>.dist-info/METADATA`),
// an sdist (`.tar.gz`: its `<name>-<version>/PKG-INFO`), or core metadata on its own (a PEP 658
// `<distribution>.metadata` file, a `METADATA` or a `PKG-INFO` file).

import { createReadStream } from "node:fs";
import { stat } from "node:fs/promises";
import { basename } from "node:path";
import { createGunzip } from "node:zlib";
import { collectBounded, readFileBounded } from "../advisories/osv/bounded-read.js";
import { ZipArchive } from "../advisories/osv/zip.js";
import { parseCoreMetadata, type CoreMetadata } from "./core-metadata.js";
import { utf8Text } from "./library-package.js";
import { LibraryDocumentError } from "./library-package.js";
import { findTarEntry, TarFormatError } from "./tar.js";

/** Bytes of core metadata read from one distribution (real ones are kilobytes; a long description can be far more). */
export const MAX_CORE_METADATA_BYTES = 16 * 1024 * 1024;
/** Uncompressed bytes of an sdist read to find its PKG-INFO. */
const MAX_SDIST_SCAN_BYTES = 1024 * 1024 * 1024;

export type DistributionKind = "wheel" | "sdist" | "metadata";

/** The kind of Python distribution a file name is, or undefined for any other file. */
export function distributionKind(path: string): DistributionKind | undefined {
  const name = basename(path);
  const lower = name.toLowerCase();
  if (lower.endsWith(".whl")) return "wheel";
  if (lower.endsWith(".tar.gz")) return "sdist";
  if (lower.endsWith(".metadata") || name === "METADATA" || name === "PKG-INFO") return "metadata";
  return undefined;
}

/** One distribution read: its core metadata and the size of the distribution file (0 when only its metadata was given). */
export interface Distribution {
  readonly metadata: CoreMetadata;
  readonly sizeBytes: number;
}

const tooLarge = (source: string) => new LibraryDocumentError(source, `core metadata larger than ${MAX_CORE_METADATA_BYTES} bytes`);

async function wheelMetadata(path: string): Promise<Buffer> {
  let zip: ZipArchive;
  try {
    zip = await ZipArchive.open(path);
  } catch (error) {
    throw new LibraryDocumentError(path, `not a wheel (zip): ${(error as Error).message}`);
  }
  try {
    for (let entry = await zip.next(); entry; entry = await zip.next()) {
      if (!/^[^/]+\.dist-info\/METADATA$/.test(entry.name)) continue;
      const read = await collectBounded(await zip.openStream(entry), MAX_CORE_METADATA_BYTES);
      if ("tooLarge" in read) throw tooLarge(`${path}!${entry.name}`);
      return read.bytes;
    }
  } catch (error) {
    if (error instanceof LibraryDocumentError) throw error;
    throw new LibraryDocumentError(path, `not a wheel (zip): ${(error as Error).message}`);
  } finally {
    zip.close();
  }
  throw new LibraryDocumentError(path, "a wheel without <name>-<version>.dist-info/METADATA");
}

async function sdistMetadata(path: string): Promise<Buffer> {
  const gunzip = createReadStream(path).pipe(createGunzip());
  try {
    const found = await findTarEntry(gunzip, (entry) => /^[^/]+\/PKG-INFO$/.test(entry), { limit: MAX_CORE_METADATA_BYTES, maxScan: MAX_SDIST_SCAN_BYTES });
    if (!found) throw new LibraryDocumentError(path, "an sdist without <name>-<version>/PKG-INFO");
    if ("tooLarge" in found) throw tooLarge(`${path}!${found.path}`);
    return found.bytes;
  } catch (error) {
    if (error instanceof LibraryDocumentError) throw error;
    if (error instanceof TarFormatError) throw new LibraryDocumentError(path, `not an sdist (.tar.gz): ${error.message}`);
    throw new LibraryDocumentError(path, `not an sdist (.tar.gz): ${(error as Error).message}`);
  } finally {
    gunzip.destroy();
  }
}

/** The size of the distribution a PEP 658 `<file>.metadata` describes, when that file lies beside it. */
async function describedSize(path: string): Promise<number> {
  if (!path.toLowerCase().endsWith(".metadata")) return 0;
  const info = await stat(path.slice(0, -".metadata".length)).catch(() => undefined);
  return info?.isFile() ? info.size : 0;
}

/**
 * Reads one distribution of `kind`.
 * @throws LibraryDocumentError naming the file (and the entry inside an archive) and the reason.
 */
export async function readDistribution(path: string, kind: DistributionKind): Promise<Distribution> {
  let bytes: Buffer;
  let sizeBytes: number;
  if (kind === "metadata") {
    const read = await readFileBounded(path, MAX_CORE_METADATA_BYTES).catch((error: Error) => {
      throw new LibraryDocumentError(path, `unreadable: ${error.message}`);
    });
    if ("tooLarge" in read) throw tooLarge(path);
    bytes = read.bytes;
    sizeBytes = await describedSize(path);
  } else {
    bytes = kind === "wheel" ? await wheelMetadata(path) : await sdistMetadata(path);
    sizeBytes = (await stat(path)).size;
  }
  return { metadata: parseCoreMetadata(utf8Text(bytes, path), path), sizeBytes };
}
