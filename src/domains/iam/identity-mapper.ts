import { create } from "@bufbuild/protobuf";
import { timestampDate, timestampFromMs } from "@bufbuild/protobuf/wkt";
import { ClaimMatchSchema, IdentitySchema, PullTokenSchema, StaticKeysSchema, type ClaimMatch, type Identity, type StaticKeys } from "../../../gen/platform/iam/v2/identity_pb.js";
import type { IdentityRow, StoredClaimMatch, StoredStaticKeys } from "./store/identities.js";
import { readClaimMatch, readStaticKeys } from "./store/identity-json.js";
import { toTimestamp } from "../../aip/time.js";

const CLAIM_MATCH_STRINGS = ["issuer", "issuerPattern", "subject", "subjectPattern", "audience", "audiencePattern"] as const;

/** The `claim_match` column for a message ("" when absent). */
export function claimMatchJson(match: ClaimMatch | undefined): string {
  if (!match) return "";
  const out: StoredClaimMatch = {};
  for (const key of CLAIM_MATCH_STRINGS) if (match[key] !== "") out[key] = match[key];
  if (Object.keys(match.claims).length > 0) out.claims = { ...match.claims };
  if (Object.keys(match.claimPatterns).length > 0) out.claimPatterns = { ...match.claimPatterns };
  return JSON.stringify(out);
}

/** The `static_keys` column for a message ("" when absent). `issuerKeys` must already be valid JSON. */
export function staticKeysJson(keys: StaticKeys | undefined): string {
  if (!keys) return "";
  const out: StoredStaticKeys = { issuer: keys.issuer, subject: keys.subject, issuerKeys: JSON.parse(keys.issuerKeys) as StoredStaticKeys["issuerKeys"] };
  if (keys.expirationTime) out.expirationTime = timestampDate(keys.expirationTime).getTime();
  return JSON.stringify(out);
}

/** The stored columns of an identity's relationship (a claim match or static keys). */
export function relationshipColumns(identity: Identity): { claim_match: string; static_keys: string } {
  const rel = identity.relationship;
  return {
    claim_match: rel.case === "claimMatch" ? claimMatchJson(rel.value) : "",
    static_keys: rel.case === "staticKeys" ? staticKeysJson(rel.value) : "",
  };
}

function claimMatchFromJson(json: string): ClaimMatch {
  const v = readClaimMatch(json) ?? {};
  const match = create(ClaimMatchSchema, { claims: { ...v.claims }, claimPatterns: { ...v.claimPatterns } });
  for (const key of CLAIM_MATCH_STRINGS) match[key] = v[key] ?? "";
  return match;
}

function staticKeysFromJson(json: string): StaticKeys {
  const v = readStaticKeys(json)!;
  return create(StaticKeysSchema, {
    issuer: v.issuer,
    subject: v.subject,
    issuerKeys: JSON.stringify(v.issuerKeys),
    expirationTime: typeof v.expirationTime === "number" ? timestampFromMs(v.expirationTime) : undefined,
  });
}

/** The exact issuer and subject an identity is known by (for bindings), "" when none. */
export function issuerAndSubject(claimMatch: string, staticKeys: string): { issuer: string; subject: string } {
  const match = readClaimMatch(claimMatch);
  if (match) return { issuer: match.issuer ?? "", subject: match.subject ?? "" };
  const keys = readStaticKeys(staticKeys);
  if (keys) return { issuer: keys.issuer, subject: keys.subject };
  return { issuer: "", subject: "" };
}

export function identityFromRow(row: IdentityRow): Identity {
  return create(IdentitySchema, {
    uid: row.uid,
    name: row.name,
    description: row.description,
    relationship:
      row.claim_match !== ""
        ? { case: "claimMatch", value: claimMatchFromJson(row.claim_match) }
        : row.static_keys !== ""
          ? { case: "staticKeys", value: staticKeysFromJson(row.static_keys) }
          : row.pull_token_hash !== "" && row.pull_token_expire_time !== null
            ? { case: "pullToken", value: create(PullTokenSchema, { expireTime: timestampFromMs(Number(row.pull_token_expire_time)) }) }
            : { case: undefined },
    lastSeenTime: row.last_seen_time === null ? undefined : toTimestamp(row.last_seen_time),
    createTime: toTimestamp(row.create_time),
    updateTime: toTimestamp(row.update_time),
  });
}
