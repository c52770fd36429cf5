import { create } from "@bufbuild/protobuf";
import { TrustPolicy_Mode, TrustPolicySchema, type TrustPolicy } from "../../../../gen/platform/registry/v2/trusted_key_pb.js";
import { toTimestamp } from "../../../aip/time.js";
import { exemptReposOf, type TrustMode, type TrustPolicyRow } from "./store/trust-policies.js";

const MODE_OF: Record<TrustMode, TrustPolicy_Mode> = { off: TrustPolicy_Mode.OFF, warn: TrustPolicy_Mode.WARN, enforce: TrustPolicy_Mode.ENFORCE };

/** The policy set at `group`, or the empty one (mode unspecified, no update time) when it sets none. */
export function trustPolicyFromRow(group: string, row: TrustPolicyRow | undefined): TrustPolicy {
  if (row === undefined) return create(TrustPolicySchema, { uid: group });
  return create(TrustPolicySchema, { uid: row.group_uid, mode: MODE_OF[row.mode as TrustMode], exemptRepos: exemptReposOf(row), updateTime: toTimestamp(row.update_time) });
}

/** The row of a checked policy (its mode one of the three). */
export function trustPolicyRow(policy: TrustPolicy, now: number): TrustPolicyRow {
  const mode = (Object.keys(MODE_OF) as TrustMode[]).find((m) => MODE_OF[m] === policy.mode) ?? "off";
  return { group_uid: policy.uid, mode, exempt_repos: JSON.stringify(policy.exemptRepos), update_time: now };
}
