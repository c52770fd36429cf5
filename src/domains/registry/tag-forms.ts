/**
 * The forms of tag names that ListTags leaves out unless asked (hosted `include_referrers`,
 * `include_dates`, `include_epochs`; v1's `exclude_*`): a tag's forms are stored with it as a
 * bit set, so a List leaves them out in SQL and pages stay full.
 */

/** cosign's tag scheme: `sha256-<64 hex>`, optionally with a suffix such as `.sig`, `.att`, `.sbom`. */
const REFERRER = /^sha256-[0-9a-f]{64}(\.[A-Za-z0-9_-]+)?$/;
/** A build date: 8, 12 or 14 digits starting with 19 or 20, not part of a longer run of digits. */
const DATE = /(^|[^0-9])(19|20)[0-9]{6}([0-9]{4}([0-9]{2})?)?($|[^0-9])/;
/** A package epoch at the end: `-r<n>`. */
const EPOCH = /-r[0-9]+$/;

export const REFERRER_FORM = 1;
export const DATE_FORM = 2;
export const EPOCH_FORM = 4;

/** The forms the tag `name` has: a bit set of REFERRER_FORM, DATE_FORM and EPOCH_FORM (0 for a plain tag). */
export function tagForms(name: string): number {
  return (REFERRER.test(name) ? REFERRER_FORM : 0) | (DATE.test(name) ? DATE_FORM : 0) | (EPOCH.test(name) ? EPOCH_FORM : 0);
}

/** Which forms to include in a listing; a form left false is left out. */
export interface IncludedForms {
  referrers: boolean;
  dates: boolean;
  epochs: boolean;
}

/** The bit set of forms a listing leaves out: a tag having any of them is not listed. */
export function hiddenForms(include: IncludedForms): number {
  return (include.referrers ? 0 : REFERRER_FORM) | (include.dates ? 0 : DATE_FORM) | (include.epochs ? 0 : EPOCH_FORM);
}
