// The apk installed database, `lib/apk/db/installed` (apk-tools, doc/apk-v2 "installed database":
// one stanza per package, stanzas separated by a blank line, each line `<letter>:<value>`; `P`
// name, `V` version, `A` architecture, `o` origin, the source package).
import { distroQualifier, type Distro } from "./distro.js";
import { InventoryError } from "./errors.js";
import { packageOfPurl, type InventoryPackage } from "./package.js";

const NAMESPACES: Record<string, string> = { alpine: "alpine", wolfi: "wolfi", chainguard: "chainguard" };

/**
 * The packages of an apk installed database, in file order, as `pkg:apk/<distro>/<P>@<V>?arch=<A>&
 * distro=<id-version>&upstream=<o>`. The namespace is the distribution's id when it is one of
 * alpine, wolfi, chainguard, else `alpine`. A stanza without `P` or `V` is refused: the file is
 * not an installed database. Throws InventoryError.
 */
export function parseApkInstalled(text: string, distro: Distro | undefined, source = "lib/apk/db/installed"): InventoryPackage[] {
  const namespace = NAMESPACES[distro?.id ?? ""] ?? "alpine";
  const packages: InventoryPackage[] = [];
  let lineNumber = 0;
  for (const stanza of text.split(/\n\s*\n/)) {
    const fields: Record<string, string> = {};
    const start = lineNumber + 1;
    for (const line of stanza.split("\n")) {
      lineNumber++;
      if (line.trim() === "") continue;
      if (line[1] !== ":") throw new InventoryError(`${source}:${lineNumber}: not an apk installed database line (expected <letter>:<value>)`);
      // `F:`/`R:` (files) repeat; only the first of the package fields counts.
      fields[line[0]] ??= line.slice(2);
    }
    lineNumber++;
    if (Object.keys(fields).length === 0) continue;
    if (!fields.P || !fields.V) throw new InventoryError(`${source}:${start}: a package stanza needs P: and V:`);
    packages.push(
      packageOfPurl({
        type: "apk",
        namespace,
        name: fields.P,
        version: fields.V,
        qualifiers: { arch: fields.A ?? "", distro: distroQualifier(distro), upstream: fields.o ?? "" },
        subpath: "",
      }),
    );
  }
  return packages;
}
