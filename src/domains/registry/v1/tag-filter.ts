/**
 * The v1 tag filters the v2 List has no field for (docs/decisions.md, "v1 registry"): which tag
 * names count as a referrer, a build date or a package epoch.
 */

/** cosign's tag scheme: `sha256-<64 hex>`, optionally with a suffix such as `.sig`, `.att`, `.sbom`. */
const REFERRER = /^sha256-[0-9a-f]{64}(\.[A-Za-z0-9_-]+)?$/;
/** A build date: 8, 12 or 14 digits starting with 19 or 20, not part of a longer run of digits. */
const DATE = /(^|[^0-9])(19|20)[0-9]{6}([0-9]{4}([0-9]{2})?)?($|[^0-9])/;
/** A package epoch at the end: `-r<n>`. */
const EPOCH = /-r[0-9]+$/;

export interface TagExclusions {
  excludeReferrers?: boolean;
  excludeDates?: boolean;
  excludeEpochs?: boolean;
}

/** Whether the tag `name` passes the exclusions asked for. */
export function keepsTag(name: string, exclude: TagExclusions): boolean {
  if (exclude.excludeReferrers && REFERRER.test(name)) return false;
  if (exclude.excludeDates && DATE.test(name)) return false;
  if (exclude.excludeEpochs && EPOCH.test(name)) return false;
  return true;
}
