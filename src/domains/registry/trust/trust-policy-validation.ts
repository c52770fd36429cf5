import { TrustPolicy_Mode, type TrustPolicy } from "../../../../gen/platform/registry/v2/trusted_key_pb.js";
import type { Violations } from "../../../aip/validation.js";

/** The fields UpdateTrustPolicy may change. */
export const TRUST_POLICY_UPDATABLE = ["mode", "exempt_repos"];

/** The most exempt repo patterns a policy holds. */
export const MAX_EXEMPT_REPOS = 32;
/** A pattern: 1 to 255 characters of a repo name's alphabet, plus `*`. */
const PATTERN = /^[a-z0-9._/*-]{1,255}$/;

/** Adds a violation for a mode that is not one of the three and for each exempt pattern out of its rules. */
export function checkTrustPolicy(violations: Violations, policy: TrustPolicy, prefix = "trust_policy."): void {
  if (![TrustPolicy_Mode.OFF, TrustPolicy_Mode.WARN, TrustPolicy_Mode.ENFORCE].includes(policy.mode)) violations.add(`${prefix}mode`, "must be MODE_OFF, MODE_WARN or MODE_ENFORCE");
  const field = `${prefix}exempt_repos`;
  if (policy.exemptRepos.length > MAX_EXEMPT_REPOS) violations.add(field, `must hold at most ${MAX_EXEMPT_REPOS} patterns`);
  policy.exemptRepos.forEach((pattern, i) => {
    if (!PATTERN.test(pattern)) violations.add(`${field}[${i}]`, "must be 1 to 255 characters among a-z 0-9 . _ / - and * (any run of characters)");
  });
}
