import { hiddenForms, tagForms, type IncludedForms } from "../tag-forms.js";

/**
 * v1's tag exclusions (docs/decisions.md, "v1 registry"): v1 lists every tag unless asked to leave
 * some forms out, v2 leaves them out unless asked to include them (tag-forms.ts). A v1 exclusion
 * applies to a tag asked for by name too.
 */
export interface TagExclusions {
  excludeReferrers?: boolean;
  excludeDates?: boolean;
  excludeEpochs?: boolean;
}

/** The v2 inclusions that list what the v1 exclusions keep. */
export function includedForms(exclude: TagExclusions): IncludedForms {
  return { referrers: !exclude.excludeReferrers, dates: !exclude.excludeDates, epochs: !exclude.excludeEpochs };
}

/** Whether the tag `name` passes the exclusions asked for. */
export function keepsTag(name: string, exclude: TagExclusions): boolean {
  return (tagForms(name) & hiddenForms(includedForms(exclude))) === 0;
}
