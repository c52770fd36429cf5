// Debian package versions, compared the way dpkg does (lib/dpkg/version.c: `parseversion`,
// `verrevcmp`, `dpkg_version_compare`; Debian Policy 5.6.12):
// `[epoch:]upstream_version[-debian_revision]`. Epochs compare numerically; the upstream version
// and then the revision compare in alternating runs of non-digits and digits: non-digit runs
// character by character where `~` sorts before everything (even the end of the string), letters
// sort before non-letters, and digit runs compare numerically.
import { compareBig, type VersionOrdering } from "./ordering.js";

export interface DebianVersion {
  epoch: number;
  upstream: string;
  revision: string;
}

const INT_MAX = 2 ** 31 - 1;
const UPSTREAM = /^[0-9][A-Za-z0-9.+~:-]*$/;
const REVISION = /^[A-Za-z0-9.+~]+$/;

/**
 * Parses like dpkg's `parseversion`, treating its warnings as errors too: the upstream version
 * must start with a digit and use only `A-Za-z0-9.+~-:`, the revision only `A-Za-z0-9.+~`; a
 * hyphen in the upstream version needs a non-empty revision after the last hyphen (dpkg 1.21 refuses
 * `1.0-`), a colon needs an epoch.
 * Blanks anywhere make the version invalid (dpkg trims them; a stored version has none).
 */
export function parseDebianVersion(version: string): DebianVersion | undefined {
  if (version === "" || /\s/.test(version)) return undefined;
  let epoch = 0;
  let rest = version;
  const colon = version.indexOf(":");
  if (colon >= 0) {
    const digits = version.slice(0, colon);
    if (!/^[0-9]+$/.test(digits)) return undefined;
    epoch = Number(digits);
    if (epoch > INT_MAX) return undefined;
    rest = version.slice(colon + 1);
    if (rest === "") return undefined;
  }
  const hyphen = rest.lastIndexOf("-");
  const upstream = hyphen >= 0 ? rest.slice(0, hyphen) : rest;
  const revision = hyphen >= 0 ? rest.slice(hyphen + 1) : "";
  if (hyphen >= 0 && revision === "") return undefined;
  if (!UPSTREAM.test(upstream)) return undefined;
  if (revision !== "" && !REVISION.test(revision)) return undefined;
  return { epoch, upstream, revision };
}

const isDigit = (c: string): boolean => c >= "0" && c <= "9";
const isAlpha = (c: string): boolean => (c >= "A" && c <= "Z") || (c >= "a" && c <= "z");

/** dpkg's `order`: digits and the end are 0, letters their code, `~` -1, others code + 256. */
function order(c: string): number {
  if (c === "" || isDigit(c)) return 0;
  if (isAlpha(c)) return c.charCodeAt(0);
  if (c === "~") return -1;
  return c.charCodeAt(0) + 256;
}

/** dpkg's `verrevcmp` over one part (upstream version or revision). */
export function compareDebianPart(a: string, b: string): number {
  let i = 0;
  let j = 0;
  const at = (s: string, k: number): string => (k < s.length ? s[k] : "");
  while (i < a.length || j < b.length) {
    while ((i < a.length && !isDigit(a[i])) || (j < b.length && !isDigit(b[j]))) {
      const ac = order(at(a, i));
      const bc = order(at(b, j));
      if (ac !== bc) return ac - bc;
      i++;
      j++;
    }
    while (at(a, i) === "0") i++;
    while (at(b, j) === "0") j++;
    const startA = i;
    const startB = j;
    while (isDigit(at(a, i))) i++;
    while (isDigit(at(b, j))) j++;
    const diff = compareBig(BigInt("0" + a.slice(startA, i)), BigInt("0" + b.slice(startB, j)));
    if (diff !== 0) return diff;
  }
  return 0;
}

export function compareDebianVersions(a: DebianVersion, b: DebianVersion): number {
  if (a.epoch !== b.epoch) return a.epoch < b.epoch ? -1 : 1;
  return compareDebianPart(a.upstream, b.upstream) || compareDebianPart(a.revision, b.revision);
}

export const debianOrdering: VersionOrdering<DebianVersion> = {
  name: "Debian",
  parse: parseDebianVersion,
  compare: compareDebianVersions,
};
