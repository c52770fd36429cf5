import { durationMs, type Duration } from "@bufbuild/protobuf/wkt";
import type { RetentionPolicy } from "../../../gen/platform/registry/v2/retention_policy_pb.js";
import type { Violations } from "../../aip/validation.js";
import { checkImmutableTags } from "./immutable-tags.js";

/** The most tags `keep_last` keeps. */
export const MAX_KEEP_LAST = 100_000;
/** Shortest and longest `expire_after` and `untagged_grace`. */
const MIN_DURATION_MS = 60_000;
const MAX_DURATION_MS = 100 * 365 * 86_400_000;

/** Adds a violation for each rule of `policy` out of its bounds (RetentionPolicy in the proto). */
export function checkRetentionRules(violations: Violations, policy: RetentionPolicy, prefix = "retention_policy."): void {
  if (!Number.isInteger(policy.keepLast) || policy.keepLast < 0 || policy.keepLast > MAX_KEEP_LAST) {
    violations.add(`${prefix}keep_last`, `must be 0 (no count rule) to ${MAX_KEEP_LAST.toLocaleString("en")}`);
  }
  checkImmutableTags(violations, policy.keepTags, `${prefix}keep_tags`);
  checkDuration(violations, `${prefix}expire_after`, policy.expireAfter);
  checkDuration(violations, `${prefix}untagged_grace`, policy.untaggedGrace);
}

function checkDuration(violations: Violations, field: string, value: Duration | undefined): void {
  if (value === undefined) return;
  const ms = durationMs(value);
  if (!(ms >= MIN_DURATION_MS && ms <= MAX_DURATION_MS)) violations.add(field, "must be at least 1 minute and at most 100 years, or unset (no rule)");
}
