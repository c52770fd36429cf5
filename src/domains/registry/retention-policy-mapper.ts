import { create } from "@bufbuild/protobuf";
import { durationFromMs, durationMs } from "@bufbuild/protobuf/wkt";
import { RetentionPolicySchema, type RetentionPolicy } from "../../../gen/platform/registry/v2/retention_policy_pb.js";
import { toTimestamp } from "../../aip/time.js";
import { keepTagsOf, type RetentionPolicyRow } from "./store/retention-policies.js";

export function retentionPolicyFromRow(row: RetentionPolicyRow): RetentionPolicy {
  return create(RetentionPolicySchema, {
    uid: row.uid,
    repoUid: row.repo_uid,
    keepLast: row.keep_last,
    keepTags: keepTagsOf(row),
    expireAfter: row.expire_after_ms === 0 ? undefined : durationFromMs(row.expire_after_ms),
    untaggedGrace: row.untagged_grace_ms === 0 ? undefined : durationFromMs(row.untagged_grace_ms),
    createTime: toTimestamp(row.create_time),
    updateTime: toTimestamp(row.update_time),
  });
}

/** The rule columns of a policy (checked by `checkRetentionRules`). */
export function retentionRulesColumns(policy: RetentionPolicy): Pick<RetentionPolicyRow, "keep_last" | "keep_tags" | "expire_after_ms" | "untagged_grace_ms"> {
  return {
    keep_last: policy.keepLast,
    keep_tags: JSON.stringify(policy.keepTags),
    expire_after_ms: policy.expireAfter ? durationMs(policy.expireAfter) : 0,
    untagged_grace_ms: policy.untaggedGrace ? durationMs(policy.untaggedGrace) : 0,
  };
}
