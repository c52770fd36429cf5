// Language lockfiles images carry: npm's `package-lock.json` (lockfileVersion 1, 2 and 3) and
// Cargo's `Cargo.lock` (versions 1 to 4). Only packages from the public registries are listed:
// those are what advisories name.
import { InventoryError } from "./errors.js";
import { packageOfPurl, type InventoryPackage } from "./package.js";

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === "object" && v !== null && !Array.isArray(v);

function npmPackage(name: string, version: string): InventoryPackage {
  const scoped = name.startsWith("@") && name.includes("/");
  return packageOfPurl({
    type: "npm",
    namespace: scoped ? name.slice(0, name.indexOf("/")) : "",
    name: scoped ? name.slice(name.indexOf("/") + 1) : name,
    version,
    qualifiers: {},
    subpath: "",
  });
}

/**
 * The installed packages of a package-lock.json: lockfileVersion 2 and 3 from `packages`
 * (`node_modules/...` keys; links, the root and entries without a version left out), version 1
 * from the nested `dependencies`. Versions that are not plain registry versions (git URLs, file:
 * paths) are left out. Throws InventoryError when the text is not a lockfile.
 */
export function parsePackageLock(text: string, source = "package-lock.json"): InventoryPackage[] {
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch {
    throw new InventoryError(`${source}: not JSON`);
  }
  if (!isObject(doc) || (!isObject(doc.packages) && !isObject(doc.dependencies) && doc.lockfileVersion === undefined)) {
    throw new InventoryError(`${source}: not an npm lockfile (no packages or dependencies)`);
  }
  const out: InventoryPackage[] = [];
  const registryVersion = (v: unknown): v is string => typeof v === "string" && /^\d+\.\d+\.\d+/.test(v);
  if (isObject(doc.packages)) {
    for (const [path, entry] of Object.entries(doc.packages)) {
      if (path === "" || !isObject(entry) || entry.link === true) continue;
      const at = path.lastIndexOf("node_modules/");
      if (at < 0) continue;
      const name = typeof entry.name === "string" ? entry.name : path.slice(at + "node_modules/".length);
      if (registryVersion(entry.version)) out.push(npmPackage(name, entry.version));
    }
    return out;
  }
  const walk = (dependencies: unknown, depth: number) => {
    if (!isObject(dependencies) || depth > 64) return;
    for (const [name, entry] of Object.entries(dependencies)) {
      if (!isObject(entry)) continue;
      if (registryVersion(entry.version)) out.push(npmPackage(name, entry.version));
      walk(entry.dependencies, depth + 1);
    }
  };
  walk(doc.dependencies, 0);
  return out;
}

const CRATES_IO_SOURCES = ["registry+https://github.com/rust-lang/crates.io-index", "sparse+https://index.crates.io/"];

/**
 * The crates of a Cargo.lock whose `source` is crates.io, in file order, as
 * `pkg:cargo/<name>@<version>`. The workspace's own crates (no source), git and path crates and
 * other registries are left out. Reads the `[[package]]` tables' `name`, `version` and `source`
 * keys (the TOML Cargo writes: one `key = "value"` per line). Throws InventoryError.
 */
export function parseCargoLock(text: string, source = "Cargo.lock"): InventoryPackage[] {
  const out: InventoryPackage[] = [];
  let current: Record<string, string> | undefined;
  let sawTable = false;
  const flush = () => {
    if (current === undefined) return;
    if (!current.name || !current.version) throw new InventoryError(`${source}: a [[package]] needs name and version`);
    if (current.source !== undefined && CRATES_IO_SOURCES.includes(current.source)) {
      out.push(packageOfPurl({ type: "cargo", namespace: "", name: current.name, version: current.version, qualifiers: {}, subpath: "" }));
    }
  };
  for (const raw of text.split("\n")) {
    const line = raw.trim();
    if (line === "" || line.startsWith("#")) continue;
    if (line.startsWith("[")) {
      flush();
      sawTable = true;
      current = line === "[[package]]" ? {} : undefined;
      continue;
    }
    if (current === undefined) continue;
    const match = /^([A-Za-z_-]+)\s*=\s*"((?:[^"\\]|\\.)*)"$/.exec(line);
    if (match) current[match[1]] = match[2].replace(/\\(.)/g, "$1");
  }
  flush();
  if (!sawTable && text.trim() !== "") throw new InventoryError(`${source}: not a Cargo.lock (no [[package]] tables)`);
  return out;
}
