// An image's packages from the files `readImageFiles` took out of its layers: the os-release names
// the distribution (the purls' `distro` qualifier and so the OSV release), then the apk and dpkg
// databases and the lockfiles each give their packages.
import { posix } from "node:path";
import { parseApkInstalled } from "./apk.js";
import { parseOsRelease, type Distro } from "./distro.js";
import { parseDpkgStatus } from "./dpkg.js";
import { parseCargoLock, parsePackageLock } from "./lockfiles.js";
import { uniquePackages, type InventoryPackage } from "./package.js";
import { parseSbom } from "./sbom.js";

export interface FileInventory {
  distro?: Distro;
  packages: InventoryPackage[];
}

/** Appends `items` one by one: `push(...items)` passes each as an argument, and overflows the stack past about 100,000. */
export function appendAll<T>(target: T[], items: readonly T[]): void {
  for (const item of items) target.push(item);
}

/**
 * The packages the files name, in a stable order: apk, dpkg status, status.d (by path), then
 * lockfiles by path. Throws InventoryError naming the first file that is not what its path says.
 */
export function packagesOfFiles(files: ReadonlyMap<string, Buffer>): FileInventory {
  const text = (path: string) => files.get(path)?.toString("utf8");
  const osRelease = text("etc/os-release") ?? text("usr/lib/os-release");
  const distro = osRelease === undefined ? undefined : parseOsRelease(osRelease);
  const packages: InventoryPackage[] = [];
  const apk = text("lib/apk/db/installed");
  if (apk !== undefined) appendAll(packages, parseApkInstalled(apk, distro));
  const status = text("var/lib/dpkg/status");
  if (status !== undefined) appendAll(packages, parseDpkgStatus(status, distro));
  const paths = [...files.keys()].sort();
  for (const path of paths.filter((p) => p.startsWith("var/lib/dpkg/status.d/"))) appendAll(packages, parseDpkgStatus(text(path)!, distro, path));
  for (const path of paths) {
    const base = posix.basename(path);
    if (base === "package-lock.json" || base === ".package-lock.json") appendAll(packages, parsePackageLock(text(path)!, path));
    else if (base === "Cargo.lock") appendAll(packages, parseCargoLock(text(path)!, path));
  }
  return distro === undefined ? { packages } : { distro, packages };
}

/** An SBOM attached to an image: its bytes, and what names it in errors. */
export interface AttachedSbom {
  bytes: Uint8Array;
  what: string;
}

/**
 * The packages of an image without repeats (`uniquePackages`): those its files name
 * (`packagesOfFiles`), then those of each of `sboms` in turn (documents of another kind skipped).
 * Throws InventoryError naming the file or SBOM that is not what it claims to be; rejects with
 * what `sboms` rejects with.
 */
export async function packagesOfImage(files: ReadonlyMap<string, Buffer>, sboms: AsyncIterable<AttachedSbom>): Promise<FileInventory> {
  const { distro, packages } = packagesOfFiles(files);
  for await (const sbom of sboms) {
    const parsed = parseSbom(sbom.bytes, sbom.what);
    if (parsed) appendAll(packages, parsed.packages);
  }
  const unique = uniquePackages(packages);
  return distro === undefined ? { packages: unique } : { distro, packages: unique };
}
