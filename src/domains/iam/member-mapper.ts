import { create } from "@bufbuild/protobuf";
import { Member_Kind, MemberSchema, type Member } from "../../../gen/platform/iam/v2/member_pb.js";
import { serverWidePersonUid } from "../../access/person-token.js";
import { isRoot } from "../../aip/uidp.js";
import { toTimestamp } from "../../aip/time.js";
import { issuerAndSubject } from "./identity-mapper.js";
import { organizationPersonUid } from "./people.js";
import type { MemberRow } from "./store/members.js";
import { readClaimMatch } from "./store/identity-json.js";

/**
 * What kind of identity a member is. A person is an identity whose uid is the one a sign-in
 * derives from its claim match's exact issuer and subject (people.ts): the server-wide login's
 * root-level uid, or the uid below its group of one of that group's identity providers; any other
 * claim match is a workload's.
 */
export function memberKind(row: Pick<MemberRow, "uid" | "group_uid" | "claim_match" | "static_keys" | "pull_token_expire_time" | "group_providers">): Member_Kind {
  const match = readClaimMatch(row.claim_match);
  if (match) {
    const { issuer, subject } = match;
    if (issuer !== undefined && subject !== undefined && isPersonUid(row, { issuer, subject })) return Member_Kind.PERSON;
    return Member_Kind.WORKLOAD;
  }
  if (row.static_keys !== "") return Member_Kind.STATIC_KEYS;
  if (row.pull_token_expire_time !== null) return Member_Kind.PULL_TOKEN;
  return Member_Kind.OPERATOR_ISSUED;
}

function isPersonUid(row: Pick<MemberRow, "uid" | "group_uid" | "group_providers">, person: { issuer: string; subject: string }): boolean {
  if (isRoot(row.uid)) return row.uid === serverWidePersonUid(person);
  return row.group_providers.some((provider) => organizationPersonUid({ uid: provider, organization: row.group_uid }, person) === row.uid);
}

export function memberFromRow(row: MemberRow): Member {
  return create(MemberSchema, {
    uid: row.uid,
    name: row.name,
    description: row.description,
    kind: memberKind(row),
    ...issuerAndSubject(row.claim_match, row.static_keys),
    lastSeenTime: row.last_seen_time === null ? undefined : toTimestamp(row.last_seen_time),
    createTime: toTimestamp(row.create_time),
    roleBindings: row.bindings.map((binding) => ({
      uid: binding.uid,
      role: { uid: binding.role_uid, name: binding.role_name, description: binding.role_description },
      group: { uid: binding.group_uid, name: binding.group_name, description: binding.group_description },
      inherited: binding.inherited,
      createTime: toTimestamp(binding.create_time),
    })),
  });
}
