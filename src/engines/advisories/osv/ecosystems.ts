// The ecosystems the OSV schema defines (https://ossf.github.io/osv-schema/#defined-ecosystems,
// ecosystems.json in ossf/osv-schema). An ecosystem string is one of these, optionally followed by
// `:` and a suffix the ecosystem defines (`Debian:12`, `Alpine:v3.19`, `Ubuntu:Pro:18.04:LTS`,
// `Maven:https://maven.google.com`). Names are case-sensitive.

export const OSV_ECOSYSTEMS: ReadonlySet<string> = new Set([
  "AlmaLinux",
  "Alpaquita",
  "Alpine",
  "Android",
  "Azure Linux",
  "BellSoft Hardened Containers",
  "Bioconductor",
  "Bitnami",
  "Chainguard",
  "CleanStart",
  "ConanCenter",
  "CRAN",
  "crates.io",
  "Debian",
  "Docker Hardened Images",
  "Echo",
  "FreeBSD",
  "GHC",
  "GIT",
  "GitHub Actions",
  "Go",
  "Hackage",
  "Hex",
  "Julia",
  "Kubernetes",
  "Linux",
  "Mageia",
  "Maven",
  "MinimOS",
  "npm",
  "NuGet",
  "openEuler",
  "openSUSE",
  "Opam",
  "OSS-Fuzz",
  "Packagist",
  "Photon OS",
  "Pub",
  "PyPI",
  "Red Hat",
  "Rocky Linux",
  "RubyGems",
  "SUSE",
  "SwiftURL",
  "Ubuntu",
  "VSCode",
  "Wolfi",
]);

/** An ecosystem string's parts: the defined ecosystem before the first `:`, and what follows it, if anything. */
export function splitEcosystem(ecosystem: string): { base: string; suffix?: string } {
  const colon = ecosystem.indexOf(":");
  return colon < 0 ? { base: ecosystem } : { base: ecosystem.slice(0, colon), suffix: ecosystem.slice(colon + 1) };
}

/** The defined ecosystem an ecosystem string names: the part before the first `:`. */
export function ecosystemBase(ecosystem: string): string {
  return splitEcosystem(ecosystem).base;
}

/** Whether the ecosystem string names an ecosystem the OSV schema defines. */
export function isOsvEcosystem(ecosystem: string): boolean {
  return OSV_ECOSYSTEMS.has(ecosystemBase(ecosystem));
}

/** The defined ecosystem that differs from `base` only in letter case, if any (for "did you mean"). */
export function ecosystemSpelledAs(base: string): string | undefined {
  const lower = base.toLowerCase();
  for (const known of OSV_ECOSYSTEMS) if (known.toLowerCase() === lower) return known;
  return undefined;
}
