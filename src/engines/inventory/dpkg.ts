// The dpkg database: `var/lib/dpkg/status` (deb-control(5) stanzas of every package dpkg knows, with
// `Status:`), and the `var/lib/dpkg/status.d/<package>` files distroless images carry instead (one
// stanza each, no `Status:`: installed by construction).
import { distroQualifier, type Distro } from "./distro.js";
import { InventoryError } from "./errors.js";
import { packageOfPurl, type InventoryPackage } from "./package.js";

/** The fields of each stanza: `Name: value` with continuation lines (leading blank) folded into the value. */
export function controlStanzas(text: string, source: string): Array<Record<string, string>> {
  const stanzas: Array<Record<string, string>> = [];
  let current: Record<string, string> = {};
  let last: string | undefined;
  const lines = text.split("\n");
  lines.forEach((line, i) => {
    if (line.trim() === "") {
      if (Object.keys(current).length > 0) stanzas.push(current);
      current = {};
      last = undefined;
      return;
    }
    if (line.startsWith(" ") || line.startsWith("\t")) {
      if (last === undefined) throw new InventoryError(`${source}:${i + 1}: a continuation line before any field`);
      current[last] += `\n${line.trim()}`;
      return;
    }
    const colon = line.indexOf(":");
    if (colon <= 0) throw new InventoryError(`${source}:${i + 1}: not a control field (expected Name: value)`);
    last = line.slice(0, colon);
    current[last] = line.slice(colon + 1).trim();
  });
  if (Object.keys(current).length > 0) stanzas.push(current);
  return stanzas;
}

/**
 * The installed packages of a dpkg status file (`Status` ending in `installed`; a stanza without
 * `Status`, as in `status.d/`, counts as installed), in file order, as `pkg:deb/<debian|ubuntu>/
 * <Package>@<Version>?arch=<Architecture>&distro=<id-version>&upstream=<Source>`; `upstream` keeps
 * the source version when `Source: name (version)` gives one. A stanza without `Package` or
 * `Version` is refused. Throws InventoryError.
 */
export function parseDpkgStatus(text: string, distro: Distro | undefined, source = "var/lib/dpkg/status"): InventoryPackage[] {
  const namespace = distro?.id === "ubuntu" ? "ubuntu" : "debian";
  const packages: InventoryPackage[] = [];
  for (const fields of controlStanzas(text, source)) {
    if (!fields.Package || !fields.Version) throw new InventoryError(`${source}: a package stanza needs Package: and Version: (${fields.Package ?? "no Package"})`);
    if (fields.Status !== undefined && !/\binstalled$/.test(fields.Status)) continue;
    const upstream = fields.Source ? fields.Source.replace(/\s*\((.+)\)$/, "@$1") : "";
    packages.push(
      packageOfPurl({
        type: "deb",
        namespace,
        name: fields.Package,
        version: fields.Version,
        qualifiers: { arch: fields.Architecture ?? "", distro: distroQualifier(distro), upstream },
        subpath: "",
      }),
    );
  }
  return packages;
}
