// The distribution an image is built on, from its `etc/os-release` (or `usr/lib/os-release`), as
// the freedesktop.org os-release format writes it: `KEY=value` lines, values optionally quoted.

export interface Distro {
  /** `ID`, lowercase: `alpine`, `debian`, `ubuntu`, `wolfi`, `chainguard`, ... */
  id: string;
  /** `VERSION_ID`: `3.19.1`, `12`, `22.04`; "" when the file has none (Wolfi, Debian testing). */
  versionId: string;
}

/** The distribution an os-release file names, or undefined when it names no `ID`. */
export function parseOsRelease(text: string): Distro | undefined {
  const values: Record<string, string> = {};
  for (const line of text.split("\n")) {
    const match = /^\s*([A-Z0-9_]+)=(.*)$/.exec(line);
    if (!match) continue;
    let value = match[2].trim();
    if (/^(["']).*\1$/.test(value)) value = value.slice(1, -1).replace(/\\(["'$`\\])/g, "$1");
    values[match[1]] = value;
  }
  const id = values.ID?.toLowerCase();
  if (!id) return undefined;
  return { id, versionId: values.VERSION_ID ?? "" };
}

/** The purl `distro` qualifier of a distribution: `alpine-3.19.1`, `debian-12`; the id alone without a version. */
export function distroQualifier(distro: Distro | undefined): string {
  if (distro === undefined) return "";
  return distro.versionId === "" ? distro.id : `${distro.id}-${distro.versionId}`;
}
