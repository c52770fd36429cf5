// One package found in an image: its purl (what the report shows) and the OSV identity that
// advisories are matched against. The mapping from purl types to OSV ecosystems lives here, in one
// table (docs/decisions.md, "Image inventory").
import { formatPurl, parsePurl, purlIdentity, type Purl } from "./purl.js";

export interface InventoryPackage {
  /** The canonical purl, qualifiers included. */
  purl: string;
  /** The OSV ecosystem advisories for it are filed under (`Debian:12`, `Alpine:v3.19`, `crates.io`); "" when none maps. */
  ecosystem: string;
  /** The name advisories use: the source package for deb and apk (`upstream`), else the package name. */
  name: string;
  /** The version advisories are evaluated at: the source version for deb when it differs, else the package's. */
  version: string;
}

const DEBIAN_CODENAMES: Record<string, string> = { buster: "10", bullseye: "11", bookworm: "12", trixie: "13", forky: "14" };

/** `debian-12.5` -> `12`; `bookworm` -> `12`; undefined when the qualifier names no Debian release. */
function debianRelease(distro: string): string | undefined {
  const text = distro.toLowerCase().replace(/^debian-?/, "");
  if (DEBIAN_CODENAMES[text]) return DEBIAN_CODENAMES[text];
  return /^(\d+)/.exec(text)?.[1];
}

/** `ubuntu-22.04` -> `22.04:LTS` (even years' April releases are LTS, as OSV names them); `23.10` stays. */
function ubuntuRelease(distro: string): string | undefined {
  const match = /^(?:ubuntu-?)?(\d\d)\.(\d\d)/.exec(distro.toLowerCase());
  if (!match) return undefined;
  const lts = match[2] === "04" && Number(match[1]) % 2 === 0;
  return `${match[1]}.${match[2]}${lts ? ":LTS" : ""}`;
}

/** `alpine-3.19.1` -> `v3.19`. */
function alpineRelease(distro: string): string | undefined {
  const match = /^(?:alpine-?)?v?(\d+)\.(\d+)/.exec(distro.toLowerCase());
  return match ? `v${match[1]}.${match[2]}` : undefined;
}

/** `upstream=openssl` or `upstream=openssl@3.0.11-1` or `upstream=openssl (3.0.11-1)`. */
function upstreamOf(purl: Purl): { name?: string; version?: string } {
  const upstream = purl.qualifiers.upstream;
  if (!upstream) return {};
  const match = /^([^@\s(]+)(?:@(\S+)|\s*\((\S+)\))?$/.exec(upstream.trim());
  if (!match) return {};
  return { name: match[1], version: match[2] ?? match[3] };
}

const withSuffix = (base: string, suffix: string | undefined) => (suffix === undefined ? base : `${base}:${suffix}`);

/**
 * The OSV identity of a purl, by type: npm -> `npm` (`@scope/name`), cargo -> `crates.io`,
 * pypi -> `PyPI`, maven -> `Maven` (`group:artifact`), golang -> `Go` (`namespace/name`),
 * deb of namespace debian -> `Debian:<major release>` and ubuntu -> `Ubuntu:<release>[:LTS]`
 * (from the `distro` qualifier; without one the ecosystem carries no release and matches every
 * release's advisories), apk of namespace alpine -> `Alpine:v<major.minor>`, wolfi -> `Wolfi`,
 * chainguard -> `Chainguard`. For deb and apk the name and version are the source package's
 * (`upstream` qualifier) when given, as Debian's and Alpine's advisories name source packages.
 * Undefined for any other type: the package is listed, never matched.
 */
export function osvIdentity(purl: Purl): { ecosystem: string; name: string; version: string } | undefined {
  const { type, namespace, name, version } = purl;
  const distro = purl.qualifiers.distro ?? "";
  switch (type) {
    case "npm":
      return { ecosystem: "npm", name: namespace ? `${namespace}/${name}` : name, version };
    case "cargo":
      return { ecosystem: "crates.io", name, version };
    case "pypi":
      return { ecosystem: "PyPI", name, version };
    case "maven":
      return namespace ? { ecosystem: "Maven", name: `${namespace}:${name}`, version } : undefined;
    case "golang":
      return { ecosystem: "Go", name: namespace ? `${namespace}/${name}` : name, version };
    case "deb":
    case "apk": {
      const upstream = upstreamOf(purl);
      const source = { name: upstream.name ?? name, version: upstream.version ?? version };
      const ns = namespace.toLowerCase();
      if (type === "deb" && ns === "debian") return { ecosystem: withSuffix("Debian", debianRelease(distro)), ...source };
      if (type === "deb" && ns === "ubuntu") return { ecosystem: withSuffix("Ubuntu", ubuntuRelease(distro)), ...source };
      if (type === "apk" && ns === "alpine") return { ecosystem: withSuffix("Alpine", alpineRelease(distro)), ...source };
      if (type === "apk" && ns === "wolfi") return { ecosystem: "Wolfi", ...source };
      if (type === "apk" && ns === "chainguard") return { ecosystem: "Chainguard", ...source };
      return undefined;
    }
    default:
      return undefined;
  }
}

/** The inventory entry of a parsed purl. */
export function packageOfPurl(purl: Purl): InventoryPackage {
  const osv = osvIdentity(purl);
  return { purl: formatPurl(purl), ecosystem: osv?.ecosystem ?? "", name: osv?.name ?? purl.name, version: osv?.version ?? purl.version };
}

/** The inventory entry of a purl's text. Throws PurlError. */
export function packageOf(purl: string): InventoryPackage {
  return packageOfPurl(parsePurl(purl));
}

/**
 * Packages without repeats: one per purl without qualifiers (a package at a version), the first
 * one met kept (callers list what they read from the image's own databases first).
 */
export function uniquePackages(packages: Iterable<InventoryPackage>): InventoryPackage[] {
  const seen = new Map<string, InventoryPackage>();
  for (const p of packages) {
    const key = purlIdentity(parsePurl(p.purl));
    if (!seen.has(key)) seen.set(key, p);
  }
  return [...seen.values()];
}
