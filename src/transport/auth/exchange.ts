import { createLocalJWKSet, decodeJwt, jwtVerify, type JWTPayload, type JWTVerifyGetKey } from "jose";
import type { StoredClaimMatch, StoredStaticKeys } from "../../domains/iam/index.js";
import { readClaimMatch, readStaticKeys, StoredJsonError } from "../../domains/iam/index.js";
import { matchesWhole } from "../../access/claim-pattern.js";
import type { UpstreamKeys } from "./upstream-keys.js";

/**
 * Workload identity exchange: whether a token of another OIDC issuer may act as an identity.
 * Matching is pure; verification takes the upstream keys as a dependency.
 */

/** The `claim_match` JSON of an identity row. */
export type ClaimMatch = StoredClaimMatch;
/** The `static_keys` JSON of an identity row. */
export type StaticKeys = StoredStaticKeys;

/** Upstream algorithms accepted (no HMAC, no `none`). */
export const UPSTREAM_ALGORITHMS = ["RS256", "RS384", "RS512", "ES256", "ES384", "PS256", "EdDSA"];
/** Seconds of clock skew tolerated on `exp` and `nbf`. */
export const CLOCK_TOLERANCE_SECONDS = 30;

/** The token does not match the identity. `reason` is for the log, never for the caller. */
export class ExchangeRefused extends Error {
  constructor(readonly reason: string) {
    super(reason);
    this.name = "ExchangeRefused";
  }
}

const isString = (v: unknown): v is string => typeof v === "string";

/** Parses an identity's `claim_match` column; undefined for "" and throws ExchangeRefused for a malformed one. */
export function parseClaimMatch(json: string): ClaimMatch | undefined {
  return refusedIfMalformed(() => readClaimMatch(json));
}

/** Parses an identity's `static_keys` column; undefined for "" and throws ExchangeRefused for a malformed one. */
export function parseStaticKeys(json: string): StaticKeys | undefined {
  return refusedIfMalformed(() => readStaticKeys(json));
}

function refusedIfMalformed<T>(read: () => T): T {
  try {
    return read();
  } catch (error) {
    if (error instanceof StoredJsonError) throw new ExchangeRefused(error.message);
    throw error;
  }
}

/** Pattern matching is claim-pattern.ts's (RE2, linear time); re-exported for the matchers below and their tests. */
export { matchesWhole };

/** A claim's value as text for matching: strings as they are, numbers and booleans in JSON form; anything else has none. */
function claimText(value: unknown): string | undefined {
  if (typeof value === "string") return value;
  if (typeof value === "number" || typeof value === "boolean") return String(value);
  return undefined;
}

/** The candidate texts of a claim: its value, or each element of an array value. */
function claimTexts(value: unknown): string[] {
  const values = Array.isArray(value) ? value : [value];
  return values.map(claimText).filter((t): t is string => t !== undefined);
}

/** At least an issuer and a subject (exact or pattern) must be set for an identity to be exchangeable. */
export function isExchangeable(match: ClaimMatch): boolean {
  return (match.issuer !== undefined || match.issuerPattern !== undefined) && (match.subject !== undefined || match.subjectPattern !== undefined);
}

/**
 * Whether `iss` is the identity's issuer. On an unverified token this is the only check made before
 * the signature is verified, and it decides whether anything is fetched: an exact issuer is compared
 * as a string; an issuer pattern (the only way to name several issuers) runs on the linear-time
 * engine, over at most MAX_MATCHED_VALUE_LENGTH characters.
 */
export function issuerMatches(match: ClaimMatch, iss: string): boolean {
  if (match.issuer !== undefined && match.issuer !== iss) return false;
  if (match.issuerPattern !== undefined && !matchesWhole(match.issuerPattern, iss)) return false;
  return match.issuer !== undefined || match.issuerPattern !== undefined;
}

/**
 * Why the claims of a (verified) token do not match `match`, or undefined when they match.
 * Every field set must match: exact fields compare equal, patterns match the whole value,
 * `audience` is contained in `aud` (a string or an array), and each named claim (a string,
 * number or boolean, or an array holding one that matches) must match.
 */
export function mismatch(match: ClaimMatch, claims: JWTPayload): string | undefined {
  if (!isExchangeable(match)) return "the identity's claim_match needs an issuer and a subject (exact or pattern)";
  if (!isString(claims.iss) || !issuerMatches(match, claims.iss)) return `issuer ${JSON.stringify(claims.iss)} does not match`;
  if (!isString(claims.sub)) return "the token has no sub";
  if (match.subject !== undefined && match.subject !== claims.sub) return `subject ${JSON.stringify(claims.sub)} is not ${JSON.stringify(match.subject)}`;
  if (match.subjectPattern !== undefined && !matchesWhole(match.subjectPattern, claims.sub)) {
    return `subject ${JSON.stringify(claims.sub)} does not match the pattern ${JSON.stringify(match.subjectPattern)}`;
  }
  const audiences = claimTexts(claims.aud);
  if (match.audience !== undefined && !audiences.includes(match.audience)) return `aud ${JSON.stringify(claims.aud)} does not contain ${JSON.stringify(match.audience)}`;
  if (match.audiencePattern !== undefined && !audiences.some((a) => matchesWhole(match.audiencePattern!, a))) {
    return `no aud of ${JSON.stringify(claims.aud)} matches the pattern ${JSON.stringify(match.audiencePattern)}`;
  }
  for (const [name, expected] of Object.entries(match.claims ?? {})) {
    if (!claimTexts(claims[name]).includes(expected)) return `claim ${name} = ${JSON.stringify(claims[name])} is not ${JSON.stringify(expected)}`;
  }
  for (const [name, pattern] of Object.entries(match.claimPatterns ?? {})) {
    if (!claimTexts(claims[name]).some((t) => matchesWhole(pattern, t))) {
      return `claim ${name} = ${JSON.stringify(claims[name])} does not match the pattern ${JSON.stringify(pattern)}`;
    }
  }
  return undefined;
}

export interface ExchangeIdentity {
  uid: string;
  claim_match: string;
  static_keys: string;
}

async function verifySignature(token: string, keys: JWTVerifyGetKey, issuer: string, now: number): Promise<JWTPayload> {
  try {
    const { payload } = await jwtVerify(token, keys, {
      algorithms: UPSTREAM_ALGORITHMS,
      issuer,
      requiredClaims: ["exp"],
      clockTolerance: CLOCK_TOLERANCE_SECONDS,
      currentDate: new Date(now),
    });
    return payload;
  } catch (error) {
    if (error instanceof ExchangeRefused) throw error;
    const { code, message } = error as { code?: string; message?: string };
    if (code === undefined) throw error; // not a verification failure (e.g. the keys could not be fetched)
    throw new ExchangeRefused(`the token does not verify: ${code}: ${message ?? ""}`);
  }
}

/**
 * Verifies an upstream token for an identity and returns its claims. Throws ExchangeRefused
 * (with the precise reason) when the token does not match, and UpstreamFetchError when the
 * issuer's keys cannot be fetched.
 *
 * With static keys, the token is verified with them (no network), and `iss`/`sub` must equal
 * theirs. With claim_match, the unverified `iss` is first compared with the identity's issuer, or
 * matched against its issuer pattern (nothing is fetched for any other issuer), then the token is
 * verified with that issuer's published keys, and only then are the other claims (subject,
 * audience, claims and their patterns) matched. An identity with both must satisfy both. Without
 * `upstream` (the registry's passwords) only static keys verify: nothing is fetched.
 */
export async function verifyForIdentity(token: string, identity: ExchangeIdentity, upstream: UpstreamKeys | undefined, now: number): Promise<JWTPayload> {
  let unverified: JWTPayload;
  try {
    unverified = decodeJwt(token);
  } catch {
    throw new ExchangeRefused("the bearer token is not a JWT");
  }
  if (!isString(unverified.iss) || unverified.iss === "") throw new ExchangeRefused("the token has no iss");
  const iss = unverified.iss;
  const staticKeys = parseStaticKeys(identity.static_keys);
  const claimMatch = parseClaimMatch(identity.claim_match);
  if (!staticKeys && !claimMatch) throw new ExchangeRefused("the identity has neither claim_match nor static_keys");

  let claims: JWTPayload;
  if (staticKeys) {
    if (staticKeys.expirationTime !== undefined && now >= staticKeys.expirationTime) throw new ExchangeRefused("the identity's static keys have expired");
    if (iss !== staticKeys.issuer) throw new ExchangeRefused(`issuer ${JSON.stringify(iss)} is not the static keys' issuer`);
    let keys: JWTVerifyGetKey;
    try {
      keys = createLocalJWKSet(staticKeys.issuerKeys);
    } catch {
      throw new ExchangeRefused("the identity's static_keys.issuerKeys is not a valid JWKS");
    }
    claims = await verifySignature(token, keys, staticKeys.issuer, now);
    if (claims.sub !== staticKeys.subject) throw new ExchangeRefused(`subject ${JSON.stringify(claims.sub)} is not the static keys' subject`);
  } else {
    if (!isExchangeable(claimMatch!)) throw new ExchangeRefused("the identity's claim_match needs an issuer and a subject (exact or pattern)");
    if (!issuerMatches(claimMatch!, iss)) throw new ExchangeRefused(`issuer ${JSON.stringify(iss)} does not match`);
    if (upstream === undefined) throw new ExchangeRefused("the identity has no static keys: only the token exchange fetches an issuer's keys");
    claims = await verifySignature(token, upstream.keysFor(iss), iss, now);
  }
  if (claimMatch) {
    const reason = mismatch(claimMatch, claims);
    if (reason !== undefined) throw new ExchangeRefused(reason);
  }
  return claims;
}
